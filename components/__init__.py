"""Custom TFX components, one package each (spec, executor, component): the pipeline issue."""
