"""A pretrained sentence encoder in TensorFlow ops: what a user's turn means, for wordings no training turn used.

:mod:`models.word_vectors` gives each word the input embedding of all-MiniLM-L6-v2, which sets "nope" as near to
"yes" as to "no". The whole network reads the words in context and was trained so that sentences of one meaning
land together: its mean-pooled output puts "nope" beside "no" and "thanks a lot , bye" beside "thank you , goodbye".
This module runs that network (a 6-layer BERT encoder, 384 units, 12 heads, exact GELU, mean pooling, unit length,
as sentence-transformers' configuration of the model says) in TensorFlow ops, with the weights of the same package,
so that it runs inside an exported SavedModel and TF Serving encodes as training did. No PyTorch is needed.

One departure from the model's own tokenizer: text is lowercased and split on spaces (the corpora here are
tokenised so), each word looked up whole in the WordPiece vocabulary, and a word the vocabulary lacks whole (an
entity id, a number written with letters and digits) is left out rather than split into pieces. Its weights are
held as (untrained) variables, so a SavedModel stores them once.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import tensorflow as tf

from models.features import lookup_table
from models.word_vectors import TENSOR, WordVectorsMissing, model_directory, model_files

HIDDEN, LAYERS, HEADS = 384, 6, 12
MAX_WORDS = 32  # a longer text keeps its first words (a user turn here has fewer than 20)
_SPECIAL = ("[CLS]", "[SEP]")


@functools.cache
def encoder_weights() -> tuple[tuple[str, ...], dict[str, np.ndarray]]:
    """The vocabulary's whole lowercase words and symbols (with [CLS] and [SEP]; no word pieces) and the network's
    weights, dense layers as [in, out]; the word embedding table holds the rows of those words alone."""
    vocabulary, weights = model_files()
    weights.pop("embeddings.position_ids", None)
    table = weights[TENSOR]
    if table.shape[1] != HIDDEN:
        raise WordVectorsMissing(f"{model_directory()}: not the encoder read here (a {HIDDEN}-unit BERT)")
    keep = [i for i, word in enumerate(vocabulary) if word in _SPECIAL
            or (word == word.lower() and not word.startswith(("##", "[")))]
    weights[TENSOR] = table[keep]
    for key in [k for k in weights if k.endswith(".weight") and weights[k].ndim == 2 and "embeddings" not in k]:
        weights[key] = np.ascontiguousarray(weights[key].T)
    return tuple(vocabulary[i] for i in keep), weights


class SentenceEncoder(tf.Module):
    """``encoder(texts)`` [B] string -> [B, 384] float32 of unit length (zeros for an empty text); each distinct
    text of a batch is encoded once."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name=name)
        words, weights = encoder_weights()
        self.index = lookup_table(words, range(len(words)), -1)
        self.cls, self.sep = words.index("[CLS]"), words.index("[SEP]")
        self.weights = {key: tf.Variable(value, trainable=False, name=key) for key, value in weights.items()}

    def _dense(self, x: tf.Tensor, prefix: str) -> tf.Tensor:
        return tf.matmul(x, self.weights[prefix + ".weight"]) + self.weights[prefix + ".bias"]

    def _norm(self, x: tf.Tensor, prefix: str) -> tf.Tensor:
        mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
        return (x - mean) * tf.math.rsqrt(variance + 1e-12) * self.weights[prefix + ".weight"] \
            + self.weights[prefix + ".bias"]

    def __call__(self, texts: tf.Tensor) -> tf.Tensor:
        unique, position = tf.unique(texts)
        ids = self.index.lookup(tf.strings.split(tf.strings.lower(unique), sep=" "))  # [U, (words)]
        ids = tf.ragged.boolean_mask(ids, ids >= 0)[:, :MAX_WORDS]
        empty = tf.equal(ids.row_lengths(), 0)  # [U]: no word the vocabulary has
        edge = tf.ones_like(ids[:, :1])
        ids = tf.concat([edge * self.cls, ids, edge * self.sep], axis=1)
        mask = tf.sequence_mask(ids.row_lengths(), dtype=tf.float32)  # [U, n]
        ids = ids.to_tensor()
        count, length = tf.shape(ids)[0], tf.shape(ids)[1]
        x = tf.gather(self.weights[TENSOR], ids) \
            + self.weights["embeddings.position_embeddings.weight"][tf.newaxis, :length] \
            + self.weights["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, "embeddings.LayerNorm")
        blocked = (1.0 - mask)[:, tf.newaxis, tf.newaxis, :] * -1e9  # [U, 1, 1, n]: padding is never attended

        def heads(t: tf.Tensor) -> tf.Tensor:
            return tf.transpose(tf.reshape(t, [count, length, HEADS, HIDDEN // HEADS]), [0, 2, 1, 3])

        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            q, k, v = (heads(self._dense(x, p + f"attention.self.{part}")) for part in ("query", "key", "value"))
            attention = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / math.sqrt(HIDDEN // HEADS) + blocked)
            context = tf.reshape(tf.transpose(tf.matmul(attention, v), [0, 2, 1, 3]), [count, length, HIDDEN])
            x = self._norm(self._dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = tf.nn.gelu(self._dense(x, p + "intermediate.dense"), approximate=False)
            x = self._norm(self._dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = tf.reduce_sum(x * mask[..., tf.newaxis], axis=1) / tf.reduce_sum(mask, axis=1, keepdims=True)
        pooled = tf.where(empty[:, tf.newaxis], 0.0, tf.math.l2_normalize(pooled, axis=-1))
        return tf.gather(pooled, position)
