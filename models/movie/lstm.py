"""The LSTM baseline of Dodge et al. (section 3.3 and appendix A) for the Movie Dialog tasks.

A message is represented by the mean of the LSTM's hidden states as its words are consumed (the approach of
Narasimhan et al. that the paper adopted after next-word likelihood ranked Reddit replies worse than random).
The message is the last ``context`` messages of the dialog and the query, in appendix A's dictionary tokens, cut
to its last ``max_tokens`` words. Each candidate (an entity, or a reply's bag of words) has its own embedding,
cached once for a whole test set as the paper notes, and the score is their inner product; softmax cross-entropy
over the candidates, the best epoch kept on dev, as for MemN2N.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from models.examples import TurnExample
from models.features import FeatureSpec, Featurizer, spec_from_sentences, tokenize
from models.memn2n import SUMMED, embed_bags, sparse_bags
from models.methods import first_k
from models.movie.examples import MovieExample
from models.movie.text import EntityText, prepare_text
from models.training import (
    STEPS_PER_CALL,
    BestOnDev,
    answer_indices,
    loop_training_steps,
    training_batches,
)


@dataclass(frozen=True)
class LstmConfig:
    embedding_dim: int = 100  # appendix B: d = 100 on tasks 1-3
    learning_rate: float = 0.001
    epochs: int = 8
    patience: int | None = 3
    batch_size: int = 32
    context: int = 2  # earlier messages read with the query
    max_tokens: int = 60
    clipnorm: float = 40.0
    seed: int = 0


class LstmNetwork(keras.Model):
    """Logits [B, C] of every candidate for token ids [B, T] (0: padding). ``gradient``: how the candidates' bags
    back-propagate (``models.memn2n.summed_rows``; the streamed trainer's large vocabulary wants ``ROWS``)."""

    def __init__(self, vocabulary_size: int, candidate_ids: np.ndarray, embedding_dim: int = 100, seed: int = 0,
                 gradient: str = SUMMED, **kwargs) -> None:
        super().__init__(**kwargs)
        self.gradient = gradient
        init = keras.initializers.RandomNormal(stddev=0.1, seed=seed)
        self.E = keras.layers.Embedding(vocabulary_size, embedding_dim, embeddings_initializer=init, name="E")
        self.lstm = keras.layers.LSTM(embedding_dim, return_sequences=True, seed=seed, name="lstm")
        self.W = keras.layers.Embedding(vocabulary_size, embedding_dim, embeddings_initializer=init, name="W")
        self.candidate_bags = sparse_bags(candidate_ids)

    def encode(self, ids: tf.Tensor) -> tf.Tensor:
        """[B, d]: the mean of the hidden states over the words (padding excluded)."""
        mask = ops.greater(ids, 0)
        hidden = self.lstm(self.E(ids), mask=mask)  # [B, T, d]
        weights = ops.cast(mask, hidden.dtype)[..., None]
        return ops.sum(hidden * weights, axis=1) / ops.maximum(ops.sum(weights, axis=1), 1.0)

    def call(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        return self.score(self.encode(inputs["tokens"]))

    def candidate_embeddings(self) -> tf.Tensor:
        """[C, d]: each candidate's bag of output embeddings, as :meth:`score` computes it."""
        return embed_bags(self.W, self.candidate_bags, self.gradient)

    def score(self, state: tf.Tensor, candidates: tf.Tensor | None = None) -> tf.Tensor:
        """Logits [B, C] of every candidate against the encoded messages [B, d] (``candidates``: their embeddings
        computed once, as :meth:`models.memn2n.MemN2N.score` takes them)."""
        candidates = self.candidate_embeddings() if candidates is None else candidates
        return ops.matmul(state, ops.transpose(candidates))


class MovieLstm:
    """The trained :class:`LstmNetwork` as an ordered ranker (``models.methods.OrderedRanker``) over
    ``candidates``: the entities, then the reply sentences."""

    def __init__(self, text: EntityText, spec: FeatureSpec, model: LstmNetwork, candidates: Sequence[str],
                 config: LstmConfig, summary: dict) -> None:
        self.text, self.spec, self.model, self.config, self.summary = text, spec, model, config, summary
        self.candidates = list(candidates)

    @classmethod
    def fit(cls, entities: Sequence[str], trn: Sequence[MovieExample], dev: Sequence[MovieExample],
            config: LstmConfig, sentences: Sequence[str] = ()) -> MovieLstm:
        """Train on ``trn`` (every answer of an example), keep the best epoch on ``dev``; ``sentences``: reply
        candidates (task 4) beside the entities."""
        keras.utils.set_random_seed(config.seed)
        text, candidates = prepare_text(entities, trn, sentences)
        trn_t, dev_t = text.examples(trn, all_answers=True), text.examples(dev, all_answers=False)
        spec = spec_from_sentences(candidates, [], {s for e in trn_t for s in (*e.memory, e.query)})
        candidate_ids = Featurizer(spec).sentence_ids(tf.constant(candidates)).numpy()
        model = LstmNetwork(len(spec.vocabulary), candidate_ids, config.embedding_dim, config.seed)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=config.learning_rate, clipnorm=config.clipnorm),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        ranker = cls(text, spec, model, [text.entity_of.get(c, c) for c in candidates], config, {})
        best = BestOnDev({"tokens": ranker.sequences(dev_t)}, answer_indices(spec, dev_t), patience=config.patience)
        features = {"tokens": ranker.sequences(trn_t)}
        loop_training_steps(model, features, STEPS_PER_CALL)
        started = time.perf_counter()
        model.fit(training_batches(features, answer_indices(spec, trn_t), config.batch_size), epochs=config.epochs,
                  verbose=0, callbacks=[best])
        ranker.summary = {"best_epoch": best.best_epoch, "dev_per_response_accuracy": round(best.best_accuracy, 2),
                          "train_seconds": round(time.perf_counter() - started, 1), "history": best.history}
        return ranker

    def sequences(self, turns: Sequence[TurnExample]) -> np.ndarray:
        """[N, max_tokens] word ids of the last ``context`` messages and the query, left-padded with 0."""
        rows = np.zeros((len(turns), self.config.max_tokens), dtype=np.int32)
        for row, turn in enumerate(turns):
            context = turn.memory[-self.config.context:] if self.config.context else ()
            ids = [self.spec.word_id(w) for message in (*context, turn.query) for w in tokenize(message)]
            ids = ids[-self.config.max_tokens:]
            if ids:
                rows[row, -len(ids):] = ids
        return rows

    def order(self, examples: Sequence[MovieExample]) -> np.ndarray:
        """[N, candidates] candidate indices of each example, best first (ties in the candidates' order)."""
        logits = self.model.predict({"tokens": self.sequences(self.text.examples(examples, all_answers=False))},
                                    batch_size=256, verbose=0)
        return np.argsort(-logits, axis=1, kind="stable")

    def rank(self, examples: Sequence[MovieExample], k: int = 10) -> list[list[str]]:
        """The first ``k`` candidates of each example."""
        return first_k(self.candidates, self.order(examples), k)
