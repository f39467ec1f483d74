"""Corpora in the dialog-bAbI layout, in pure Python (no TensorFlow).

The format core: corpus (the model), babi_format (reader and writer), layout (file names), facts (KB facts),
validate, stats, sharded_files, atomic (writes), kb_lookup, dstc2 (the task-6 converter). One sub-package per
source: ``restaurant`` (tasks 1-5 simulator), ``banking`` (self-play, labels sidecar), ``movie`` (Movie Dialog).
"""
