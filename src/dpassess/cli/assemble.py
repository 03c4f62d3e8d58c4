"""CLI commands for assemble (registered on import)."""
