"""Baselines of Dodge et al. for the Movie Dialog tasks: a KB question-answering system (task 1), SVD matrix
factorisation (task 2) and TF-IDF retrieval (task 4).

* **KB QA.** The question's KB entity is found by longest match (appendix A's dictionary); the question with
  the entity taken out is a pattern, and training tells which relation, in which direction, each pattern asks
  for (the one whose KB values are the gold answers most often). Test questions with an unseen pattern take the
  relation of the training pattern sharing most words. Answers are the KB values, then every other entity.
* **SVD.** As the paper does, the text is thrown away but for its movie entities: each training example is a
  "user" row (the movies mentioned and the answer) of a user x movie matrix, factorised by truncated SVD; a test
  user is folded in from the movies it mentions, and unmentioned movies are ranked by the reconstruction.
* **TF-IDF.** ``models.ir_baselines.TfIdfMatch`` on the candidates, with the query alone or with the history;
  :class:`DiscussionIr` ranks each example among its own split's candidate file.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import svds

from data.movie.reader import EntityDictionary, Triple
from models.ir_baselines import TfIdfMatch
from models.movie.examples import MovieExample, turn_examples

PLACEHOLDER = "<e>"


class KbQa:
    def __init__(self, triples: Sequence[Triple], entities: Sequence[str], training: Sequence[MovieExample]) -> None:
        self.dictionary = EntityDictionary(entities, [e.query for e in training], min_count=1)
        self.display = {" ".join(self.dictionary.tokenize(e)): e for e in entities}
        self.forward: dict[tuple[str, str], list[str]] = defaultdict(list)  # (subject, relation) -> values
        self.backward: dict[tuple[str, str], list[str]] = defaultdict(list)  # (value, relation) -> subjects
        for t in triples:
            self.forward[(t.subject, t.relation)].append(t.value)
            self.backward[(t.value, t.relation)].append(t.subject)
        self.relations = sorted({t.relation for t in triples})
        votes: dict[str, Counter] = defaultdict(Counter)
        for example in training:
            pattern, entity = self._pattern(example.query)
            if entity is None:
                continue
            gold = set(example.answers)
            for relation in self.relations:
                for direction, table in (("forward", self.forward), ("backward", self.backward)):
                    overlap = len(gold & set(table.get((entity, relation), ())))
                    if overlap:
                        votes[pattern][(relation, direction)] += overlap
        self.patterns = {pattern: counts.most_common(1)[0][0] for pattern, counts in votes.items()}
        self.entities = list(entities)

    def _pattern(self, question: str) -> tuple[str, str | None]:
        tokens = self.dictionary.tokenize(question)
        found = [t for t in tokens if t in self.dictionary.entities]
        if not found:
            return " ".join(tokens), None
        entity = max(found, key=len)
        pattern = " ".join(PLACEHOLDER if t == entity else t for t in tokens)
        return pattern, self.display.get(entity, entity)

    def _relation(self, pattern: str) -> tuple[str, str] | None:
        if pattern in self.patterns:
            return self.patterns[pattern]
        words = set(pattern.split())
        best = max(self.patterns, key=lambda p: len(words & set(p.split())), default=None)
        return self.patterns[best] if best is not None else None

    def rank(self, examples: Sequence[MovieExample], k: int = 10) -> list[list[str]]:
        ranked = []
        for example in examples:
            pattern, entity = self._pattern(example.query)
            relation = self._relation(pattern) if entity is not None else None
            answers: list[str] = []
            if relation is not None:
                table = self.forward if relation[1] == "forward" else self.backward
                answers = list(dict.fromkeys(table.get((entity, relation[0]), [])))
            ranked.append(answers[:k] + self._others(set(answers), k - len(answers)))
        return ranked

    def _others(self, taken: set[str], wanted: int) -> list[str]:
        """The first ``wanted`` entities not in ``taken``: the rest of a ranking is every other entity in the
        list's order, and only its first k are scored (listing all 75k per question cost most of the baseline)."""
        others: list[str] = []
        for entity in self.entities:
            if len(others) >= wanted:
                break
            if entity not in taken:
                others.append(entity)
        return others


class SvdRecommender:
    def __init__(self, movies: Sequence[str], entities: Sequence[str], training: Sequence[MovieExample],
                 rank: int = 32) -> None:
        self.movies = list(dict.fromkeys(movies))
        self.column = {m: i for i, m in enumerate(self.movies)}
        self.dictionary = EntityDictionary(entities, min_count=1)
        self.display = {" ".join(self.dictionary.tokenize(m)): m for m in self.movies}
        rows, columns = [], []
        for row, example in enumerate(training):
            for movie in [*self._movies_in(example.query), *example.answers]:
                if movie in self.column:
                    rows.append(row)
                    columns.append(self.column[movie])
        matrix = sparse.csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(len(training), len(self.movies)))
        matrix.data[:] = 1.0
        k = max(1, min(rank, min(matrix.shape) - 1))
        _, singular, vt = svds(matrix, k=k, random_state=0)  # ARPACK starts from a random vector otherwise
        self.items = (vt.T * np.sqrt(singular)).astype(np.float64)  # [movies, k]
        self.popularity = np.asarray(matrix.sum(axis=0)).ravel()

    def _movies_in(self, text: str) -> list[str]:
        return [self.display[t] for t in self.dictionary.tokenize(text) if t in self.display]

    def rank(self, examples: Sequence[MovieExample], k: int = 100) -> list[list[str]]:
        ranked = []
        for example in examples:
            mentioned = [self.column[m] for m in self._movies_in(example.query)]
            user = self.items[mentioned].mean(axis=0) if mentioned else np.zeros(self.items.shape[1])
            scores = self.items @ user + 1e-6 * self.popularity  # popularity breaks ties (and cold users)
            scores[mentioned] = -np.inf
            order = np.argsort(-scores, kind="stable")[:k]
            ranked.append([self.movies[int(i)] for i in order])
        return ranked


def tfidf_discussion(candidates: Sequence[str], training: Sequence[MovieExample], use_history: bool) -> TfIdfMatch:
    documents = [e.query for e in training] + [a for e in training for a in e.answers] + list(candidates)
    return TfIdfMatch(candidates, documents, use_history=use_history)


@dataclass(frozen=True)
class DiscussionIr:
    """TF-IDF retrieval of task 4's replies as a ranker of Movie Dialog examples: each example is ranked among its
    split's candidate file (``candidates(split)``). The IDF counts that file too, so each split has a model of its
    own rather than one order over every candidate."""

    candidates: Callable[[str], Sequence[str]]
    training: Sequence[MovieExample]
    use_history: bool

    def rank(self, examples: Sequence[MovieExample], k: int = 10) -> list[list[str]]:
        ranked: list[list[str]] = [[] for _ in examples]
        for split in dict.fromkeys(e.split for e in examples):
            chosen = [i for i, e in enumerate(examples) if e.split == split]
            model = tfidf_discussion(self.candidates(split), self.training, self.use_history)
            for i, row in zip(chosen, model.rank(turn_examples([examples[i] for i in chosen]), k), strict=True):
                ranked[i] = row
        return ranked
