"""An LSTM over a dialog's utterances: the recurrent policy of Hybrid Code Networks (Williams, Asadi & Zweig, 2017).

A MemN2N reads the history as a set it attends over; HCN carries a state from turn to turn instead, so what was
said three turns ago reaches the answer through every turn since. Here each memory line (its words and speaker
word, as :class:`models.features.Featurizer` makes them) is one step of the LSTM, oldest first, and the query the
last step; a dense layer over the last state scores every candidate (HCN's actions: in the template ranker, the
templates). HCN's bag-of-words input is the bag of the line's word embeddings (a learned projection of the same
bag); HCN's averaged word2vec vectors are, when given (``pretrained``), the mean of the line's pretrained word vectors
(:mod:`models.word_vectors`), fixed, beside the bag.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from models.memn2n import SUMMED, bag_of_embeddings


class UtteranceLSTM(keras.Model):
    """Scores every candidate for a (memory, query) pair with an LSTM over the utterances. ``call``: logits [B, C]."""

    def __init__(self, vocabulary_size: int, candidates: int, embedding_dim: int = 32, hidden: int = 128,
                 seed: int = 0, pretrained: np.ndarray | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.A = keras.layers.Embedding(vocabulary_size, embedding_dim, name="A",
                                        embeddings_initializer=keras.initializers.RandomNormal(stddev=0.1, seed=seed))
        # [V, k] each vocabulary word's pretrained vector (zeros for a word without one), never trained.
        self.W = None if pretrained is None else keras.layers.Embedding(
            vocabulary_size, pretrained.shape[1], name="W", trainable=False,
            embeddings_initializer=keras.initializers.Constant(pretrained))
        self.lstm = keras.layers.LSTM(hidden, name="lstm", seed=seed,
                                      kernel_initializer=keras.initializers.GlorotUniform(seed=seed),
                                      recurrent_initializer=keras.initializers.Orthogonal(seed=seed + 1))
        self.actions = keras.layers.Dense(candidates, name="actions",
                                          kernel_initializer=keras.initializers.GlorotUniform(seed=seed + 2))

    def steps(self, inputs: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        """The LSTM's input [B, T, d], oldest line first and the query last, and its mask [B, T].

        Memories come most recent first with the filled slots a prefix, so only the batch's longest history is
        read; reversed, the empty slots come first and the mask skips them. A line's time word (the id before its
        speaker word) is left out: the order of the steps already says when it was said."""
        memory_ids, query_ids = inputs["memory"], inputs["query"]
        filled = ops.any(ops.greater(memory_ids, 0), axis=-1)  # [B, M]
        used = tf.maximum(tf.reduce_max(tf.reduce_sum(tf.cast(filled, tf.int32), axis=1)), 1)
        memory_ids, filled = memory_ids[:, :used], filled[:, :used]
        without_time = tf.concat([memory_ids[..., :-2], memory_ids[..., -1:]], axis=-1)
        lines = bag_of_embeddings(self.A, without_time, SUMMED)  # [B, used, d]
        query = bag_of_embeddings(self.A, query_ids, SUMMED)  # [B, d]
        if self.W is not None:
            lines = tf.concat([lines, self.averaged(without_time)], axis=-1)
            query = tf.concat([query, self.averaged(query_ids)], axis=-1)
        steps = tf.concat([tf.reverse(lines, axis=[1]), query[:, tf.newaxis, :]], axis=1)
        mask = tf.concat([tf.reverse(filled, axis=[1]), tf.ones_like(filled[:, :1])], axis=1)
        return steps, mask

    def averaged(self, ids: tf.Tensor) -> tf.Tensor:
        """[..., k] the mean pretrained vector of the words of each line of ``ids`` [..., words] that have one
        (zeros for a line with none)."""
        vectors = self.W(ids)  # [..., words, k]
        has = tf.cast(tf.reduce_any(tf.not_equal(vectors, 0.0), axis=-1), vectors.dtype)  # [..., words]
        return tf.reduce_sum(vectors, axis=-2) / tf.maximum(tf.reduce_sum(has, axis=-1, keepdims=True), 1.0)

    def call(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        steps, mask = self.steps(inputs)
        return self.actions(self.lstm(steps, mask=mask))

    def constant_inputs(self, inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """Nothing is computed once per example (the MemN2N's match type is): see ``models.training``."""
        return {}

    def predict_with_attention(self, inputs: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        """The logits and an empty attention [B, 0, M]: an LSTM attends to nothing (as a MemN2N with no hop)."""
        logits = self.call(inputs)
        memory = inputs["memory"]
        return logits, tf.zeros(tf.stack([tf.shape(memory)[0], 0, tf.shape(memory)[1]]), dtype=logits.dtype)
