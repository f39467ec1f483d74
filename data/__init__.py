"""Corpora in the dialog-bAbI layout, in pure Python (no TensorFlow).

The format core: corpus (the model), babi_format (reader and writer), layout (file names), facts (KB facts),
validate, stats, show, sharded_files, atomic (writes, locks, clean-up), reading, kb_lookup. One sub-package per
source: ``babi`` (the tasks 1-5 simulator and the DSTC2 converter of task 6), ``banking`` (self-play, labels
sidecar), ``movie`` (Movie Dialog). ``reading`` is how every file is read (regular files only, lines bounded).
"""
