"""QTI 2.1 content packages (Canvas and other QTI systems)."""
