"""Supervised embeddings and MemN2N with long-term KB memory (sections 3.1-3.2 of Dodge et al.) on the Movie
Dialog tasks.

Text goes through appendix A's dictionary first, and each KB entity becomes one token (its words joined by
``_``), so the project's featuriser, models and training loop (``models.training``) serve unchanged. Candidates
are the KB entities (tasks 1-3) and, for task 4, reply sentences: the training replies and the dev and test
candidate files, as bAbI's one candidate file serves every split. A ranker gives its order over all of them
(``MovieRanker.order``), so that each split is ranked among its own candidates (``models.methods.Among``):
entities, or the split's candidate file.

* Supervised embeddings: f(x, y) = x^T U^T U y with one dictionary (``shared_embeddings``) or x^T U^T V y with two.
* MemN2N: the memories are the dialog history and, as long-term memory, the KB sentences (one per triple) that
  hold a word of the last message, found through a hash (inverted index) and skipping words found in more than
  ``max_frequency`` sentences; at most ``max_kb`` of them, those sharing most words with the message first.

The text preparation (dictionary, entity tokens, long-term memory) is ``models.movie.text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from data.movie.reader import Triple
from models.features import spec_from_sentences
from models.methods import first_k
from models.movie.examples import MovieExample
from models.movie.text import EntityText, prepare_text
from models.serving.ranker import SavedModelRanker
from models.training import TrainConfig, fit_and_export, memory_size_for


class MovieRanker:
    """A supervised-embeddings model, or a MemN2N with long-term memory when ``config.model == "memn2n"``: an
    ordered ranker (``models.methods.OrderedRanker``) over ``candidates``."""

    def __init__(self, text: EntityText, ranker: SavedModelRanker, candidates: Sequence[str], summary: dict) -> None:
        self.text, self.ranker, self.summary = text, ranker, summary
        self.candidates = list(candidates)  # in the model's order, as the corpus writes them

    @classmethod
    def fit(cls, entities: Sequence[str], trn: Sequence[MovieExample], dev: Sequence[MovieExample],
            config: TrainConfig, out: str | Path, top_k: int = 100, triples: Sequence[Triple] = (),
            sentences: Sequence[str] = ()) -> MovieRanker:
        """``sentences``: reply candidates (task 4) beside the entities; ``top_k``: how many the model returns
        (every candidate when ``sentences`` are given, so that ``rank`` can keep a split's own)."""
        text, candidates = prepare_text(entities, trn, sentences, triples if config.model == "memn2n" else ())
        trn_t, dev_t = text.examples(trn, all_answers=True), text.examples(dev, all_answers=False)
        sentences_seen = {s for e in trn_t for s in (*e.memory, e.query)} | set(text.kb)
        spec = spec_from_sentences(candidates, [], sentences_seen, memory_size=memory_size_for(config, trn_t + dev_t))
        summary = fit_and_export(spec, trn_t, dev_t, config, out, top_k=len(candidates) if sentences else top_k)
        return cls(text, SavedModelRanker(out), [text.entity_of.get(c, c) for c in candidates], summary)

    def order(self, examples: Sequence[MovieExample]) -> np.ndarray:
        """[N, top_k] candidate indices of each example, best first (every candidate when the model was fitted with
        reply ``sentences``)."""
        return self.ranker.outputs(self.text.examples(examples, all_answers=False))["indices"]

    def rank(self, examples: Sequence[MovieExample], k: int = 10) -> list[list[str]]:
        """The first ``k`` candidates of each example."""
        return first_k(self.candidates, self.order(examples), k)
