"""Corpora in the dialog-bAbI layout: format, knowledge bases, simulators, validation, statistics. No TensorFlow."""
