"""The bank on disk: YAML files -> raw data with positions -> the model, and items back to YAML."""
