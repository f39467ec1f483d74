"""The `dialog` command line (cli), the TFX pipeline (create_pipeline), its profiles and its runners."""
