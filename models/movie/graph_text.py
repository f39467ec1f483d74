"""Appendix A's dictionary and the long-term KB memory of Dodge et al. in TensorFlow ops.

:class:`models.movie.text.EntityText` prepares Movie Dialog text in Python for Table 6's benchmark; this module
does the same inside a graph, so that the pipeline's Trainer featurises a stream of tf.Examples in ``tf.data`` and
the exported SavedModel answers raw text (TF Serving has no Python):

- :meth:`GraphEntityText.tokens`: lower-cased words (runs of letters, digits and ``_'.-``; any other mark a word of
  its own), read left to right taking the longest KB entity at each step; an entity becomes one token, its words
  joined by ``_`` (:meth:`~GraphEntityText.parse`); then, with ``words`` given, a word that is neither an entity nor
  one of them is dropped (the dictionary's rare words, :meth:`~GraphEntityText.keep`). Empty text is ``<empty>``.
- :meth:`GraphEntityText.long_term`: the KB sentences that hold a word of a message, found through an inverted
  index (the paper's hash lookup), skipping words found in more than ``max_frequency`` sentences, at most
  ``max_kb`` of them, those sharing most words first (ties: KB order).

Both give what the Python code gives for the same inputs (tested), except that letters outside ASCII are matched
with RE2's Unicode classes rather than Python's ``\\w``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from data.movie.reader import text_words

EMPTY = "<empty>"
# A character that is neither a word character nor a space is a word of its own (data.movie.reader._words).
_MARK = r"([^\pL\pN_\s'.\-])"
# Sort key radix of the long-term lookup: a message shares fewer distinct words than this with a KB sentence.
_COUNT_RADIX = 1 << 16


def entity_key(entity: str) -> str:
    """How the dictionary stores an entity: its lower-cased words joined by spaces."""
    return " ".join(text_words(entity.lower()))


class GraphEntityText(tf.Module):
    """``entities``: the KB entities; ``kb``: the KB sentences already in tokens (``EntityText.kb``); ``words``:
    the dictionary's kept words (None keeps every word, to count them)."""

    def __init__(self, entities: Sequence[str], kb: Sequence[str] = (), words: Sequence[str] | None = None,
                 max_frequency: int = 100, max_kb: int = 30, name: str | None = None) -> None:
        super().__init__(name=name)
        keys = sorted({entity_key(e) for e in entities if e.strip()})
        self.max_words = max((len(k.split()) for k in keys), default=1)
        self.entities = _string_set(keys)
        # An entity's token (its words joined by "_") or a kept word: what keep() keeps.
        self.kept = _string_set(sorted({*words, *(k.replace(" ", "_") for k in keys)})) if words is not None \
            else None
        self.max_frequency, self.max_kb = max_frequency, max_kb
        self.kb_size = len(kb)
        postings: dict[str, list[int]] = defaultdict(list)
        for i, sentence in enumerate(kb):
            for word in dict.fromkeys(sentence.split()):
                postings[word].append(i)
        kb_words = sorted(postings)
        self.kb = tf.constant(list(kb) or [""], tf.string)
        self.kb_words = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant(kb_words or [""], tf.string), tf.range(max(len(kb_words), 1), dtype=tf.int64)),
            default_value=-1)
        lengths = np.array([len(postings[w]) for w in kb_words] or [0], dtype=np.int64)
        self.posting_lengths = tf.constant(lengths)
        self.postings = tf.RaggedTensor.from_row_lengths(
            tf.constant(np.array([i for w in kb_words for i in postings[w]], dtype=np.int64)), lengths)

    def tokens(self, text: tf.Tensor) -> tf.Tensor:
        """[N] strings -> [N] strings of tokens joined by spaces: :meth:`parse`, then :meth:`keep`."""
        return self.keep(self.parse(text))

    def parse(self, text: tf.Tensor) -> tf.Tensor:
        """[N] strings -> [N] strings of every token (entities and words, rare ones too) joined by spaces. It depends
        on the entities alone, so it can run once, ahead of training (the ExampleGen stores its output)."""
        marked = tf.strings.regex_replace(tf.strings.lower(text, encoding="utf-8"), _MARK, r" \1 ")
        words = tf.strings.split(marked)  # [N, (L)]
        # One empty column more: a batch of empty texts still has a position to loop over.
        dense = tf.pad(words.to_tensor(""), [[0, 0], [0, 1]], constant_values="")
        width = tf.shape(dense)[1]
        padded = tf.pad(dense, [[0, 0], [0, self.max_words - 1]], constant_values="")
        gram = joined = dense  # the n words from each position, joined by spaces (the key) and by "_" (the token)
        longest = tf.ones_like(dense, dtype=tf.int32)
        token = dense
        for n in range(2, self.max_words + 1):
            following = padded[:, n - 1:n - 1 + width]
            gram, joined = gram + " " + following, joined + "_" + following
            found = self.entities.lookup(gram) > 0
            longest = tf.where(found, n, longest)
            token = tf.where(found, joined, token)
        lengths = tf.cast(words.row_lengths(), tf.int32)

        def step(i: tf.Tensor, free: tf.Tensor, starts: tf.TensorArray) -> tuple:
            start = (i >= free) & (i < lengths)
            return i + 1, tf.where(start, i + tf.gather(longest, i, axis=1), free), starts.write(i, start)

        _, _, starts = tf.while_loop(lambda i, *_: i < width, step,
                                     (tf.constant(0), tf.zeros_like(lengths), tf.TensorArray(tf.bool, size=width)))
        keep = tf.transpose(tf.reshape(starts.stack(), [width, -1]))  # [N, L]
        return _joined(tf.ragged.boolean_mask(token, keep))

    def keep(self, parsed: tf.Tensor) -> tf.Tensor:
        """[N] :meth:`parse` outputs -> the same without the rare words (neither an entity nor one of ``words``);
        unchanged without ``words``."""
        if self.kept is None:
            return parsed
        tokens = tf.strings.split(parsed)
        return _joined(tf.ragged.boolean_mask(tokens, self.kept.lookup(tokens) > 0))

    def long_term(self, message: tf.Tensor) -> tf.RaggedTensor:
        """[B] token strings -> [B, (<= max_kb)] KB sentences, most shared words first."""
        words = tf.strings.split(message)
        ids = self.kb_words.lookup(words.flat_values)
        rows = words.value_rowids()
        known = ids >= 0
        ids, rows = tf.boolean_mask(ids, known), tf.boolean_mask(rows, known)
        frequent = tf.gather(self.posting_lengths, ids) > self.max_frequency
        ids, rows = tf.boolean_mask(ids, ~frequent), tf.boolean_mask(rows, ~frequent)
        vocabulary = tf.cast(tf.shape(self.posting_lengths)[0], tf.int64)
        pairs, _ = tf.unique(rows * vocabulary + ids)  # each word once per message
        rows, ids = pairs // vocabulary, pairs % vocabulary
        found = tf.gather(self.postings, ids)  # [pairs, (sentences)]
        size = tf.constant(max(self.kb_size, 1), tf.int64)
        hits, _, counts = tf.unique_with_counts(tf.gather(rows, found.value_rowids()) * size + found.flat_values,
                                                out_idx=tf.int64)
        owners, sentences = hits // size, hits % size
        # Message first, then most shared words, then KB order.
        order = tf.sort(owners * size * _COUNT_RADIX + (_COUNT_RADIX - counts) * size + sentences)
        owners, sentences = order // (size * _COUNT_RADIX), order % size
        rank = tf.range(tf.size(owners, out_type=tf.int64)) - tf.searchsorted(owners, owners, side="left",
                                                                           out_type=tf.int64)
        kept = rank < self.max_kb
        return tf.RaggedTensor.from_value_rowids(tf.gather(self.kb, tf.boolean_mask(sentences, kept)),
                                                 tf.boolean_mask(owners, kept), nrows=tf.shape(message, tf.int64)[0])


def _joined(tokens: tf.RaggedTensor) -> tf.Tensor:
    joined = tf.strings.reduce_join(tokens, axis=1, separator=" ")
    return tf.where(tf.equal(joined, ""), EMPTY, joined)


def _string_set(keys: Sequence[str]) -> tf.lookup.StaticHashTable:
    """A set of strings: 1 for a member, 0 otherwise."""
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(keys) or [""], tf.string), tf.ones([max(len(keys), 1)], tf.int64) * (1 if keys else 0)),
        default_value=0)
