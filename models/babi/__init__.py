"""Bordes et al. (dialog-bAbI tasks 1-6): its hyperparameter tables (``presets``), the rule-based systems (tasks 1-5,
DSTC2), the template ranker (``template``), Table 2's methods (``methods``, registered), its reproduction
(``reproduce``, ``folds``, ``answer_kinds``) and report (``report``, beside ``paper``'s published figures)."""
