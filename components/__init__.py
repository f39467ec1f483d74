"""Custom TFX components, one module each: the ExampleGens (dialog-bAbI layout, Movie Dialog), the data gate, the
Trainers' shared base and each paper's run_fn, the Vertex AI training path, the TFMA metrics and extractors, and
the atomic Pusher; they use ``data`` and ``models``, never the runners."""
