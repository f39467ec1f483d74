"""Models, in TensorFlow/Keras: a core that belongs to no paper, and one sub-package per paper.

Core: papers (the ``Paper`` protocol and the one registry of papers: which paper a corpus is), turn_papers (what
the papers of dialog-bAbI files share), methods (the ``Ranker`` protocol, ``Fitted``, ``Settings`` and the one
method registry), examples (one per bot turn, padding, ``TaskData``), tf_examples, features (the one featuriser),
memn2n, embeddings, ensemble, training (the loop of ``dialog train`` and the TFX Trainer), optimizers, metrics,
ir_baselines, distribute (the strategy ``TF_CONFIG`` asks for), jobs (fits in worker processes), recurrent, gfile.
``serving``: export, loading, evaluate, explain, chat, the REST request. ``babi`` (Bordes et al.), ``movie``
(Dodge et al.), ``banking`` (Majumdar et al.): each paper's plugin (its ``Paper``), profiles (the pipeline's
product), models and tables.
"""
