"""Majumdar et al. (banking self-play): single and multiple memory networks, and Tables 8-9.

* ``networks``: SMN, and MMN with the selector that routes each dialog to an intent's network; the paper's settings.
* ``labelled``: the banking examples with their dialog's labels (intent, template split, challenge turns).
* ``methods``: ``smn`` and ``mmn`` in the registry of methods (``models.methods``).
* ``paper``: Tables 8 and 9 as published.
* ``reproduce``: Tables 8-9 on a corpus (``dialog benchmark``).
* ``report``: the tables as Markdown and CSV.
"""
