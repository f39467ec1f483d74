"""The `dialog` command line (``cli``, a package of command groups), the TFX pipeline (``create_pipeline``), its
profiles and its runners."""
