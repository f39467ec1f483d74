"""Featurisation, Keras models (MemN2N, supervised embeddings), non-neural baselines: the models issue."""
