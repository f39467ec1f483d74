"""Supervised embeddings (section 4.3 of Bordes et al., 2017): f(x, y) = (A x)^T (B y), margin ranking loss.

x is the bag of words of the last user utterance, or of the whole history and the last utterance (Table 8's
"use history"); y is a candidate's bag of words. A = B is an option. Match type (4.5 / appendix D): with
history, the three-condition rule of the Memory Network; without, a candidate gets the type word of each KB
entity type it has a word of, whether or not that word was said.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from models.memn2n import TypedCandidates, bag_of_embeddings, embed_bags, sparse_bags


class SupervisedEmbeddings(keras.Model):
    """Scores every candidate for an input. ``call`` returns scores [B, C]."""

    def __init__(self, vocabulary_size: int, candidate_ids: np.ndarray, embedding_dim: int = 32,
                 use_history: bool = True, shared: bool = False, match_type_ids: np.ndarray | None = None,
                 type_word_ids: np.ndarray | None = None, seed: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.use_history = use_history
        init = keras.initializers.RandomNormal(stddev=0.1, seed=seed)
        self.A = keras.layers.Embedding(vocabulary_size, embedding_dim, embeddings_initializer=init, name="A")
        self.B = self.A if shared else keras.layers.Embedding(vocabulary_size, embedding_dim,
                                                               embeddings_initializer=init, name="B")
        self.candidate_bags = sparse_bags(candidate_ids)  # [C, S] word ids
        self.match_type = match_type_ids is not None
        if self.match_type:
            self.typed = TypedCandidates(match_type_ids, type_word_ids, vocabulary_size)

    def encode_input(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        """A x: [B, d]. With history, the memory's words (time and speaker words left out) join the query's."""
        x = bag_of_embeddings(self.A, inputs["query"])
        if self.use_history:
            words = inputs["memory"][..., :-2]  # the last two ids of a slot are its time and speaker words
            x = x + ops.sum(bag_of_embeddings(self.A, words), axis=1)
        return x

    def call(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        x = self.encode_input(inputs)
        scores = ops.matmul(x, ops.transpose(embed_bags(self.B, self.candidate_bags)))  # [B, C]
        if self.match_type:
            # Without history (appendix D), a candidate gets its own entity types, said or not.
            said = self.typed.said_of(inputs) if self.use_history else None
            scores = scores + self.typed.scores(x, self.B, said)
        return scores

    def constant_inputs(self, inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """As :meth:`MemN2N.constant_inputs`: match type's ``said`` when it depends on the history."""
        if self.match_type and self.use_history:
            return self.typed.constant_inputs(inputs)
        return {}

    def predict_with_attention(self, inputs: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        """Scores, and an empty attention [B, 0, M] (no memory hops) so that both models export alike."""
        scores = self(inputs)
        memory = inputs["memory"]
        return scores, tf.zeros([tf.shape(memory)[0], 0, tf.shape(memory)[1]], dtype=scores.dtype)


def margin_ranking_loss(margin: float, negatives: int) -> keras.losses.Loss:
    """sum over N sampled negatives y' of max(0, margin - f(x, y) + f(x, y')); a negative equal to y counts 0."""

    def loss(y_true: tf.Tensor, scores: tf.Tensor) -> tf.Tensor:
        gold = tf.cast(tf.reshape(y_true, [-1, 1]), tf.int32)
        positive = tf.gather(scores, gold, batch_dims=1)  # [B, 1]
        sampled = tf.random.uniform([tf.shape(scores)[0], negatives], maxval=tf.shape(scores)[1], dtype=tf.int32)
        negative = tf.gather(scores, sampled, batch_dims=1)  # [B, N]
        hinge = tf.nn.relu(margin - positive + negative)
        return tf.reduce_sum(tf.where(sampled == gold, tf.zeros_like(hinge), hinge), axis=-1)

    return loss
