"""CLI commands for lint (registered on import)."""
