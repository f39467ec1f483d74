"""Classical IR baselines of section 4.2 of Bordes et al. (2017): TF-IDF match and nearest neighbour.

TF-IDF match ranks every candidate by the TF-IDF weighted cosine between the input (the last user utterance, or
the whole history) and the candidate. With match type (4.5), a candidate gains the type word of each of its words
that is a KB entity said in the input or the memory (the paper's three conditions), and the input gains the type
word of each KB entity said in the input or the memory, so that the two meet in the cosine; whatever the input,
the conversation is where entities are looked for (the last utterance before an API call is silence).

Nearest neighbour answers with the response of the training utterance that shares the most words with the last
user utterance; among tied utterances, the response that co-occurs most often with them wins. The paper scores by
"word overlap" without saying more: the count of shared words, or (``normalised``) that count over the words of
either (Jaccard's), which prefers the utterance that says nothing else.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import sparse

from models.examples import TurnExample
from models.features import TYPE_PREFIX, tokenize

TYPED_CACHE = 4096  # sets of said entity words whose re-weighted candidates are kept


class TfIdfMatch:
    def __init__(self, candidates: Sequence[str], documents: Sequence[str], entity_types: dict[str, str] | None = None,
                 use_history: bool = False, type_weight: float = 1.0) -> None:
        """``documents`` (training utterances and candidates) give the IDF; ``entity_types`` turns on match type,
        whose type words weigh ``type_weight`` in the cosine (their IDF). With entities looked for in the whole
        conversation, 1 was chosen on every public dev set among 1, 3, 10 and 30 (docs/babi.md), so Table 2 keeps
        it; a larger weight is what makes type words count against a whole history's dozens of words."""
        self.candidates = list(candidates)
        self.entity_types = entity_types
        self.use_history = use_history
        self.type_weight = type_weight
        frequency: Counter[str] = Counter()
        for document in documents:
            frequency.update(set(tokenize(document)))
        self.index = {word: i for i, word in enumerate(sorted(frequency))}
        if entity_types:
            for kind in sorted(set(entity_types.values())):
                self.index.setdefault(TYPE_PREFIX + kind, len(self.index))
        self.idf = np.ones(len(self.index))  # unseen words: idf 1
        for word, count in frequency.items():
            self.idf[self.index[word]] = math.log(len(documents) / count) + 1.0
        if entity_types:
            for kind in set(entity_types.values()):
                self.idf[self.index[TYPE_PREFIX + kind]] = type_weight
        self._counts = self._bag_matrix([Counter(tokenize(c)) for c in self.candidates])  # [C, V] raw counts
        self._plain = self._normalised(self._counts)
        # The candidates re-weighted for each set of said entity words (:meth:`_typed_rows`): a dialog's turns say the
        # same ones turn after turn, and each set costs a dozen sparse-matrix operations.
        self._typed: dict[tuple[int, ...], tuple[sparse.csr_matrix, np.ndarray]] = {}
        if entity_types:
            # Candidate x entity-word counts, and entity word -> its type word's column.
            entities = sorted(word for word in entity_types if word in self.index)
            self._entity_column = {word: i for i, word in enumerate(entities)}
            self._candidate_entities = self._counts[:, [self.index[w] for w in entities]].tocsc()
            self._entity_type = sparse.csr_matrix(
                (np.ones(len(entities)), (np.arange(len(entities)),
                                          [self.index[TYPE_PREFIX + entity_types[w]] for w in entities])),
                shape=(len(entities), len(self.index)))

    def _bag_matrix(self, bags: Sequence[Counter[str]]) -> sparse.csr_matrix:
        rows, columns, values = [], [], []
        for row, bag in enumerate(bags):
            for word, count in bag.items():
                column = self.index.get(word)
                if column is not None:
                    rows.append(row)
                    columns.append(column)
                    values.append(count)
        return sparse.csr_matrix((values, (rows, columns)), shape=(len(bags), len(self.index)), dtype=np.float64)

    def _normalised(self, counts: sparse.csr_matrix) -> sparse.csr_matrix:
        """TF-IDF rows of unit length."""
        weighted = counts.multiply(self.idf[np.newaxis, :]).tocsr()
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        return sparse.diags(1.0 / np.maximum(norms, 1e-12)) @ weighted

    @staticmethod
    def _said(example: TurnExample) -> set[str]:
        """The words of the input or the memory: where match type looks for entities."""
        return set(tokenize(" ".join([*example.memory, example.query])))

    def _input_bag(self, example: TurnExample) -> Counter[str]:
        text = " ".join([*example.memory, example.query]) if self.use_history else example.query
        bag = Counter(tokenize(text))
        if self.entity_types:
            for word in self._said(example):
                if word in self.entity_types:
                    bag[TYPE_PREFIX + self.entity_types[word]] += 1
        return bag

    def _typed_candidates(self, said: set[str]) -> sparse.csr_matrix:
        """Candidates with the type word of each of their entity words that the input also has."""
        present = [self._entity_column[w] for w in said if w in self._entity_column]
        if not present:
            return self._plain
        selector = sparse.csr_matrix((np.ones(len(present)), (present, present)),
                                     shape=(len(self._entity_column),) * 2)
        additions = (self._candidate_entities @ selector @ self._entity_type).tocsr()
        additions.data = np.minimum(additions.data, 1.0)  # a type word once per candidate and type
        return self._normalised(self._counts + additions)

    def scores(self, example: TurnExample) -> np.ndarray:
        """Cosine of the TF-IDF input with every candidate."""
        return self.batch_scores([example])[0]

    def batch_scores(self, examples: Sequence[TurnExample]) -> np.ndarray:
        """[N, C] cosines, the inputs of a batch at once: one sparse product with the plain candidates, then, with
        match type, only the candidates that gain a type word are re-weighted (the same arithmetic, in the same
        order, as scoring each input against every re-weighted candidate: the rankings are identical)."""
        bags = [self._input_bag(example) for example in examples]
        queries = self._normalised(self._bag_matrix(bags))  # [N, V]
        scores = (self._plain @ queries.T).toarray().T  # candidate rows first: each dot product sums as before
        if self.entity_types:
            for i, example in enumerate(examples):
                typed, rows = self._typed_rows(self._said(example))
                if rows.size:
                    scores[i, rows] = (typed @ queries[i].T).toarray().ravel()
        return scores

    def _typed_rows(self, said: set[str]) -> tuple[sparse.csr_matrix, np.ndarray]:
        """The candidates that gain the type word of one of their entity words the input also has, re-weighted,
        and their row numbers."""
        present = tuple(sorted(self._entity_column[w] for w in said if w in self._entity_column))
        if not present:
            return self._plain[:0], np.zeros(0, dtype=np.int64)
        if present not in self._typed:
            if len(self._typed) >= TYPED_CACHE:
                self._typed.clear()
            # Only the said entity words' columns and rows: counts of small integers, exact in any order.
            said_columns = list(present)
            additions = (self._candidate_entities[:, said_columns] @ self._entity_type[said_columns]).tocsr()
            additions.data = np.minimum(additions.data, 1.0)  # a type word once per candidate and type
            rows = np.unique(additions.nonzero()[0])
            self._typed[present] = (self._normalised(self._counts[rows] + additions[rows]), rows)
        return self._typed[present]

    def rank(self, examples: Sequence[TurnExample], k: int = 10, batch: int = 256) -> list[list[str]]:
        """The ``k`` best candidates of each example, best first."""
        ranked = []
        for start in range(0, len(examples), batch):
            for row in self.batch_scores(examples[start:start + batch]):
                ranked.append([self.candidates[int(i)] for i in np.argsort(-row, kind="stable")[:k]])
        return ranked


class NearestNeighbour:
    def __init__(self, training: Sequence[TurnExample], normalised: bool = False) -> None:
        self.normalised = normalised
        self.responses: dict[str, Counter[str]] = defaultdict(Counter)
        for example in training:
            self.responses[example.query][example.answer] += 1
        self.utterances = list(self.responses)
        self.words = [set(tokenize(u)) for u in self.utterances]
        self.inverted: dict[str, list[int]] = defaultdict(list)
        for i, words in enumerate(self.words):
            for word in words:
                self.inverted[word].append(i)
        self.fallback = Counter(a for counts in self.responses.values() for a in counts.elements())

    def votes(self, query: str) -> Counter[str]:
        """The responses to the training utterances sharing most words with ``query`` (or the largest share of
        their words and its, ``normalised``; every response, when none shares a word), counted."""
        words = dict.fromkeys(tokenize(query))  # in query order: ties break the same way in every run
        overlap: Counter[int] = Counter()
        for word in words:
            for i in self.inverted.get(word, ()):
                overlap[i] += 1
        if not overlap:
            return self.fallback
        score: Mapping[int, float] = overlap
        if self.normalised:  # Jaccard's: shared words over the words of either
            score = {i: count / (len(words) + len(self.words[i]) - count) for i, count in overlap.items()}
        best = max(score.values())
        votes: Counter[str] = Counter()
        for i, value in score.items():
            if value == best:
                votes.update(self.responses[self.utterances[i]])
        return votes

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The ``k`` most voted responses of each example's nearest training utterances."""
        return [[answer for answer, _ in self.votes(example.query).most_common(k)] for example in examples]
