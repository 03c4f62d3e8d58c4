"""The jobs a user runs, composed from the layers below (the CLI is a thin layer over these)."""
