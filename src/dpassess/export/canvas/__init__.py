"""The Canvas export: QTI 1.2 as Canvas's own quiz export writes it."""
