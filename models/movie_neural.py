"""Supervised embeddings and MemN2N with long-term KB memory (sections 3.1-3.2 of Dodge et al.) on the Movie
Dialog entity tasks (1-3).

Text goes through appendix A's dictionary first, and each KB entity becomes one token (its words joined by
``_``), so the project's featuriser, models and training loop (``models.training``) serve unchanged: candidates
are the KB entities.

* Supervised embeddings: f(x, y) = x^T U^T U y with one dictionary (``shared_embeddings``) or x^T U^T V y with two.
* MemN2N: the memories are the dialog history and, as long-term memory, the KB sentences (one per triple) that
  hold a word of the last message, found through a hash (inverted index) and skipping words found in more than
  ``max_frequency`` sentences; at most ``max_kb`` of them, those sharing most words with the message first.

An example with several correct answers is trained once per answer (at most ``MAX_ANSWERS``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from data.movie_dialog import EntityDictionary, Triple
from models.evaluate import SavedModelRanker
from models.examples import BOT, USER, TurnExample
from models.features import spec_from_sentences
from models.movie_examples import MovieExample
from models.training import TrainConfig, fit_and_export

MAX_ANSWERS = 3


class EntityText:
    """Text in the dictionary's tokens, one whitespace token per entity; with KB triples, the long-term memory."""

    def __init__(self, dictionary: EntityDictionary, entities: Sequence[str], triples: Sequence[Triple] = (),
                 max_frequency: int = 100, max_kb: int = 30) -> None:
        self.dictionary = dictionary
        self.token_of = {e: self(e) for e in entities}
        self.entity_of = {token: e for e, token in self.token_of.items()}
        self.kb = [f"{self.token_of.get(t.subject, self(t.subject))} {t.relation} "
                   f"{self.token_of.get(t.value, self(t.value))}" for t in triples]
        self.index: dict[str, list[int]] = defaultdict(list)
        for i, sentence in enumerate(self.kb):
            for word in set(sentence.split()):
                self.index[word].append(i)
        self.max_frequency, self.max_kb = max_frequency, max_kb

    def long_term(self, message: str) -> list[str]:
        """KB sentences holding a word of ``message`` (hash lookup), most shared words first."""
        hits: Counter[int] = Counter()
        for word in set(message.split()):
            found = self.index.get(word, ())
            if len(found) <= self.max_frequency:
                hits.update(found)
        return [self.kb[i] for i, _ in sorted(hits.items(), key=lambda item: (-item[1], item[0]))[:self.max_kb]]

    def __call__(self, text: str) -> str:
        return " ".join(t.replace(" ", "_") for t in self.dictionary.tokenize(text)) or "<empty>"

    def examples(self, examples: Sequence[MovieExample], all_answers: bool) -> list[TurnExample]:
        turns = []
        for e in examples:
            history = [self(h) for h in e.history]
            long_term = self.long_term(" ".join([*history[-2:], self(e.query)])) if self.kb else []
            memory = (*long_term, *history)  # KB sentences read as user-side memories, as the KB results of bAbI
            speakers = (*([USER] * len(long_term)), *(USER if i % 2 == 0 else BOT for i in range(len(history))))
            answers = e.answers[:MAX_ANSWERS] if all_answers else e.answers[:1]
            for answer in answers:
                turns.append(TurnExample(f"movie-{e.task}/{e.split}/{e.dialog}", f"movie-{e.task}", e.split,
                                         e.exchange - 1, memory, speakers, self(e.query),
                                         self.token_of.get(answer, self(answer))))
        return turns


class MovieRanker:
    """A supervised-embeddings model, or a MemN2N with long-term memory when ``config.model == "memn2n"``."""

    def __init__(self, text: EntityText, ranker: SavedModelRanker, summary: dict) -> None:
        self.text, self.ranker, self.summary = text, ranker, summary

    @classmethod
    def fit(cls, entities: Sequence[str], trn: Sequence[MovieExample], dev: Sequence[MovieExample],
            config: TrainConfig, out: str | Path, top_k: int = 100, triples: Sequence[Triple] = ()) -> MovieRanker:
        texts = [e.query for e in trn] + [h for e in trn for h in e.history]
        triples = triples if config.model == "memn2n" else ()
        text = EntityText(EntityDictionary(entities, texts), entities, triples)
        trn_t, dev_t = text.examples(trn, all_answers=True), text.examples(dev, all_answers=False)
        candidates = list(dict.fromkeys(text.token_of.values()))
        sentences = {s for e in trn_t for s in (*e.memory, e.query)} | set(text.kb)
        memory_size = max(1, max(len(e.memory) for e in (*trn_t, *dev_t)))
        spec = spec_from_sentences(candidates, [], sentences, memory_size=min(memory_size, config.max_memory))
        summary = fit_and_export(spec, trn_t, dev_t, config, out, top_k=top_k)
        return cls(text, SavedModelRanker(out), summary)

    def rank(self, examples: Sequence[MovieExample], k: int) -> list[list[str]]:
        turns = self.text.examples(examples, all_answers=False)
        responses = self.ranker.rank(turns)["responses"]
        return [[self.text.entity_of.get(r.decode("utf-8"), r.decode("utf-8")) for r in row[:k]] for row in responses]
