"""Corpora, in pure Python (no TensorFlow): the dialog-bAbI layout and the Movie Dialog one.

The format core: corpus (the model), babi_format (reader and writer), layout (file names), facts (KB facts),
validate, stats, show, sharded_files, atomic (writes, locks, clean-up), reading, kb_lookup, oov_dev, progress. One
sub-package per paper: ``babi`` (the tasks 1-5 simulator and the DSTC2 converter of task 6), ``banking`` (self-play,
labels sidecar), ``movie`` (Movie Dialog: its reader, world and tasks). ``reading`` is how every file is read
(regular files only, lines bounded). Which paper a corpus belongs to is asked of ``models.papers``, not here.
"""
