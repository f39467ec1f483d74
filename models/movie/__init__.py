"""Dodge et al. (Movie Dialog): Table 6 and the methods it compares.

* ``examples``: the examples (one per exchange) and the corpus read once (``MovieData``).
* ``text``: text as the models read it (appendix A's dictionary, entity tokens, long-term KB memory).
* ``baselines``: the KB QA system, SVD and TF-IDF retrieval.
* ``neural``: supervised embeddings and MemN2N with long-term memory.
* ``lstm``: the LSTM baseline.
* ``paper``: the paper's Table 6 figures and its k per task.
* ``methods``: the registered methods, one per row of Table 6, and their configs.
* ``reproduce``: Table 6 run on a corpus (``dialog benchmark``).
* ``report``: Table 6 as Markdown.
"""
