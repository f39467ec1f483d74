"""A fourth paper, plugged in from outside the project's packages (``DIALOG_PAPERS=tests.fourth_paper.plugin``):
an echo task in the dialog-bAbI layout (task 9, the bot repeats the word asked for), its own schema, one method
(the core MemN2N), its own table and pipeline profiles. It proves that a paper is added without an edit under
``data/``, ``models/``, ``components/`` or ``pipeline/`` (tests/test_fourth_paper.py)."""
