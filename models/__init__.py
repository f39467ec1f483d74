"""Models, in TensorFlow/Keras: a core that belongs to no paper, and one sub-package per paper.

Core: examples (one per bot turn, padding, the ``Ranker`` protocol, ``TaskData``), tf_examples, features (the one
featuriser), memn2n, embeddings, training (the loop of ``dialog train`` and the TFX Trainer), presets, metrics,
ir_baselines, gfile. ``serving``: export, loading, evaluate, explain, chat, the REST request. ``babi`` (Bordes et
al.), ``movie`` (Dodge et al.), ``banking`` (Majumdar et al.): each paper's models and tables.
"""
