"""Custom TFX components, one module each: the ExampleGen, the data gate, the Trainer's run_fn, the TFMA metrics
and the atomic Pusher; they use ``data`` and ``models``, never the runners."""
