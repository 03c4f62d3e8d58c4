"""CLI commands for importing (registered on import)."""
