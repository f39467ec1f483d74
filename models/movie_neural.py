"""Supervised embeddings (section 3.2 of Dodge et al.) on the Movie Dialog entity tasks (1-3).

Text goes through appendix A's dictionary first, and each KB entity becomes one token (its words joined by
``_``), so the project's featuriser, model and training loop (``models.training``) serve unchanged: candidates
are the KB entities, f(x, y) = x^T U^T U y with one dictionary (``shared_embeddings``) or x^T U^T V y with two.
An example with several correct answers is trained once per answer (at most ``MAX_ANSWERS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from data.movie_dialog import EntityDictionary
from models.evaluate import SavedModelRanker
from models.examples import BOT, USER, TurnExample
from models.features import spec_from_sentences
from models.movie_examples import MovieExample
from models.training import TrainConfig, fit_and_export

MAX_ANSWERS = 3


class EntityText:
    """Text in the dictionary's tokens, one whitespace token per entity."""

    def __init__(self, dictionary: EntityDictionary, entities: Sequence[str]) -> None:
        self.dictionary = dictionary
        self.token_of = {e: self(e) for e in entities}
        self.entity_of = {token: e for e, token in self.token_of.items()}

    def __call__(self, text: str) -> str:
        return " ".join(t.replace(" ", "_") for t in self.dictionary.tokenize(text)) or "<empty>"

    def examples(self, examples: Sequence[MovieExample], all_answers: bool) -> list[TurnExample]:
        turns = []
        for e in examples:
            memory = tuple(self(h) for h in e.history)
            speakers = tuple(USER if i % 2 == 0 else BOT for i in range(len(memory)))
            answers = e.answers[:MAX_ANSWERS] if all_answers else e.answers[:1]
            for answer in answers:
                turns.append(TurnExample(f"movie-{e.task}/{e.split}/{e.dialog}", f"movie-{e.task}", e.split,
                                         e.exchange - 1, memory, speakers, self(e.query),
                                         self.token_of.get(answer, self(answer))))
        return turns


class MovieEmbeddings:
    def __init__(self, text: EntityText, ranker: SavedModelRanker, summary: dict) -> None:
        self.text, self.ranker, self.summary = text, ranker, summary

    @classmethod
    def fit(cls, entities: Sequence[str], trn: Sequence[MovieExample], dev: Sequence[MovieExample],
            config: TrainConfig, out: str | Path, top_k: int = 100) -> MovieEmbeddings:
        texts = [e.query for e in trn] + [h for e in trn for h in e.history]
        text = EntityText(EntityDictionary(entities, texts), entities)
        trn_t, dev_t = text.examples(trn, all_answers=True), text.examples(dev, all_answers=False)
        candidates = list(dict.fromkeys(text.token_of.values()))
        sentences = {s for e in trn_t for s in (*e.memory, e.query)}
        spec = spec_from_sentences(candidates, [], sentences, memory_size=max(1, max(len(e.memory) for e in trn_t)))
        summary = fit_and_export(spec, trn_t, dev_t, replace(config, model="embeddings"), out, top_k=top_k)
        return cls(text, SavedModelRanker(out), summary)

    def rank(self, examples: Sequence[MovieExample], k: int) -> list[list[str]]:
        turns = self.text.examples(examples, all_answers=False)
        responses = self.ranker.rank(turns)["responses"]
        return [[self.text.entity_of.get(r.decode("utf-8"), r.decode("utf-8")) for r in row[:k]] for row in responses]
