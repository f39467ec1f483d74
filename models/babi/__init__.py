"""Bordes et al. (dialog-bAbI tasks 1-6): the rule-based systems (tasks 1-5, DSTC2), the template ranker and
Table 2 (``table2``: the registry of methods)."""
