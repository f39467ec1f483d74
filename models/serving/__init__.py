"""Serving an exported model: export (the SavedModel and its signatures), ranker (the one loader), evaluate,
explain, chat and the TF Serving REST request."""
