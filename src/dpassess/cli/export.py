"""CLI commands for export (registered on import)."""
