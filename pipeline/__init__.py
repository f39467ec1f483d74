"""The `dialog` command line; `create_pipeline` and its runners join with the pipeline issue."""
