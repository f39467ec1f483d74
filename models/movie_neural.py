"""Supervised embeddings and MemN2N with long-term KB memory (sections 3.1-3.2 of Dodge et al.) on the Movie
Dialog tasks.

Text goes through appendix A's dictionary first, and each KB entity becomes one token (its words joined by
``_``), so the project's featuriser, models and training loop (``models.training``) serve unchanged. Candidates
are the KB entities (tasks 1-3) and, for task 4, reply sentences: the training replies and the dev and test
candidate files, as bAbI's one candidate file serves every split. Each task is ranked among its own candidates
(``MovieRanker.rank``'s ``among``): entities, or the split's candidate file.

* Supervised embeddings: f(x, y) = x^T U^T U y with one dictionary (``shared_embeddings``) or x^T U^T V y with two.
* MemN2N: the memories are the dialog history and, as long-term memory, the KB sentences (one per triple) that
  hold a word of the last message, found through a hash (inverted index) and skipping words found in more than
  ``max_frequency`` sentences; at most ``max_kb`` of them, those sharing most words with the message first.

An example with several correct answers is trained once per answer (at most ``MAX_ANSWERS``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from itertools import islice
from pathlib import Path

from data.movie_dialog import EntityDictionary, Triple
from models.evaluate import SavedModelRanker
from models.examples import BOT, USER, TurnExample
from models.features import spec_from_sentences
from models.movie_examples import MovieExample
from models.training import TrainConfig, fit_and_export, memory_size_for

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

    def rank(self, examples: Sequence[MovieExample], k: int, among: Collection[str] | None = None) -> list[list[str]]:
        """The first ``k`` candidates for each example, only those in ``among`` when it is given."""
        indices = self.ranker.rank(self.text.examples(examples, all_answers=False))["indices"]
        return first_k(self.candidates, indices, k, among)


def prepare_text(entities: Sequence[str], trn: Sequence[MovieExample], sentences: Sequence[str] = (),
                 triples: Sequence[Triple] = ()) -> tuple[EntityText, list[str]]:
    """The dictionary built on the training texts, and the candidates in its tokens: the entities, then the
    reply ``sentences``; ``EntityText.entity_of`` maps each candidate back to its text in the corpus."""
    texts = [e.query for e in trn] + [h for e in trn for h in e.history]
    text = EntityText(EntityDictionary(entities, texts), entities, triples)
    tokens = {original: text.token_of.get(original) or text(original)
              for original in dict.fromkeys([*entities, *sentences])}
    text.entity_of.update({token: original for original, token in tokens.items() if original not in text.token_of})
    return text, list(dict.fromkeys(tokens.values()))


def first_k(candidates: Sequence[str], indices: Iterable[Iterable[int]], k: int,
            among: Collection[str] | None = None) -> list[list[str]]:
    """Each row of candidate ``indices`` (best first) as the first ``k`` candidates, keeping those in ``among``."""
    allowed = set(among) if among is not None else None
    return [list(islice((a for a in (candidates[i] for i in row) if allowed is None or a in allowed), k))
            for row in indices]
