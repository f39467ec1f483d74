"""The template ranker in TensorFlow ops: delexicalisation, filling features, template model and filler in one
module, so that the exported SavedModel needs no Python of ours (TF Serving, ``saved_model_cli``, TFMA).

:class:`FillingFeatures` computes, for a batch of raw dialogs and any candidates, the features that
``models.babi.template.filling.candidate_features`` defines in Python (the readable reference; a test holds them equal).
Everything is vectorised over the batch: a dialog's lines are ``memory`` then the query, each split into words;
entity words are indices into the lexicon's values, and per-value facts (said by the user how many turns ago, in
the latest API call, among the latest KB results, ...) are segment reductions over those indices.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf

from data.corpus import API_CALL_PREFIX, KB_RESULT_PATTERN, NO_RESULT, is_api_call
from models.babi.dialog_state import DialogStateTracker, StateSpec, last_index
from models.features import FeatureSpec
from models.memn2n import MemN2N
from models.serving.export import DialogServingModule, hold_models

NAME = "name"
_NONE = np.int32(2**31 - 1)  # unsorted_segment_min of an empty segment


def _per_value(ids: tf.Tensor, mask: tf.Tensor, data: tf.Tensor, values: int, reduce: str) -> tf.Tensor:
    """[B, V]: ``data`` reduced (min or max) over the positions of ``ids`` (value indices, any shape [B, ...])
    where ``mask`` holds, per batch row and value."""
    batch = tf.shape(ids)[0]
    rows = tf.reshape(tf.range(batch), tf.concat([[batch], tf.ones([tf.rank(ids) - 1], tf.int32)], 0))
    segment = tf.where(mask & (ids >= 0), rows * values + ids, batch * values)
    reducer = tf.math.unsorted_segment_min if reduce == "min" else tf.math.unsorted_segment_max
    out = reducer(tf.broadcast_to(data, tf.shape(ids)), segment, batch * values + 1)[:-1]
    return tf.reshape(out, [batch, values])


def _pair_ids(rows: tf.Tensor, values: tf.Tensor) -> tf.Tensor:
    """[n] one id per distinct (row, value) pair, int32 in [0, n)."""
    _, value_ids = tf.unique(values, out_idx=tf.int64)
    _, ids = tf.unique(tf.cast(rows, tf.int64) * tf.cast(tf.size(values), tf.int64) + value_ids)
    return ids


class FillingFeatures(tf.Module):
    """The filling features of candidates in raw dialogs: ``features(memory, memory_speaker, query, ids)`` gives
    [B, G, F] for the candidate indices ``ids`` [B, G] (``len(candidates)``: padding, all zero)."""

    def __init__(self, types: dict[str, str], attributes: dict[str, dict[str, str]], candidates: Sequence[str],
                 feature_names: Sequence[str], name: str | None = None) -> None:
        super().__init__(name=name)
        self.feature_names = tuple(feature_names)
        values = sorted(types)
        index = {value: v for v, value in enumerate(values)}
        kinds = sorted(set(types.values()) - {NAME})
        self.value_count, self.kind_count = len(values), max(len(kinds), 1)
        self.word_value = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(values or [""], tf.string),
                                                tf.constant(list(range(len(values))) or [-1], tf.int32)), -1)
        self.kind_index = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(kinds or [""], tf.string),
                                                tf.constant(list(range(len(kinds))) or [-1], tf.int32)), -1)
        # Per value: its kind (-1: a restaurant name) and, padded with one row, whether it is a name.
        value_kind = np.array([kinds.index(types[v]) if types[v] != NAME else -1 for v in values] + [-1], np.int32)
        self.value_kind = tf.constant(value_kind)
        self.is_name = tf.constant(np.array([types[v] == NAME for v in values] + [False]))
        # The KB file's attributes: [V + 1, K] value index of attribute k of value v (a name), -1 when none.
        kb = np.full((len(values) + 1, max(len(kinds), 1)), -1, np.int32)
        for entity, kinds_of in attributes.items():
            for kind, value in kinds_of.items():
                if entity in index and kind in kinds and value in index:
                    kb[index[entity], kinds.index(kind)] = index[value]
        self.kb = tf.constant(kb)
        # Each candidate's entity values (padding: V), its own restaurant (first name, -1 when none); one padding row.
        slots = [[index[w] for w in c.split(" ") if w in index] for c in candidates]
        width = max((len(s) for s in slots), default=0) or 1
        table = np.full((len(candidates) + 1, width), len(values), np.int32)
        own = np.full(len(candidates) + 1, -1, np.int32)
        for c, row in enumerate(slots):
            table[c, :len(row)] = row
            own[c] = next((v for v in row if value_kind[v] == -1), -1)
        self.slots, self.own = tf.constant(table), tf.constant(own)

    def value_table(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor
                    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """Per-value features over the U values the batch holds (its words' values, and the KB attributes of the
        restaurants on offer), not over every value of the lexicon: a batch of 64 task-5 turns holds a few
        hundred of 3,627, and every other value has the features of a value no dialog touched (known, and
        nothing else). Returns [B, U + 2, F] the features (own_attribute left 0; column U: a value outside the
        batch, column U + 1: padding), the KB results as :meth:`attribute` reads them, [B, U + 2] the names
        those results state attributes of, [B, U + 2] the values each dialog touches (their features are not a
        stranger's), and [V + 1] each value's column (U outside the batch; the padding value V: U + 1)."""
        values, kinds = self.value_count, self.kind_count
        lines = tf.concat([memory, query[:, tf.newaxis]], axis=1)  # [B, L]: the query is the newest user line
        speaker = tf.concat([memory_speaker, tf.fill([tf.shape(query)[0], 1], "user")], axis=1)
        batch, length = tf.shape(lines)[0], tf.shape(lines)[1]
        position = tf.range(length)[tf.newaxis, :]
        user, bot = tf.equal(speaker, "user"), tf.equal(speaker, "bot")
        is_fact = tf.strings.regex_full_match(lines, KB_RESULT_PATTERN)
        result = user & (tf.equal(lines, NO_RESULT) | is_fact)
        ragged = tf.strings.split(lines, sep=" ")
        count = tf.cast(ragged.row_lengths(axis=-1).to_tensor(), tf.int32)  # [B, L] words per line
        # The words are looked up as one flat list; only the value indices are laid out [B, L, S], at least 3 wide
        # (a padded [B, L, S] of strings held 11 (task 5) to 62 (task 6) times as many cells as words).
        width = tf.maximum(tf.reduce_max(count), 3)
        words = ragged[:, :, :3].to_tensor(default_value="", shape=tf.stack([batch, length, 3]))  # [B, L, 3]
        ids = ragged.with_flat_values(self.word_value.lookup(ragged.flat_values)).to_tensor(
            default_value=-1, shape=tf.stack([batch, length, width]))  # [B, L, S] value index, -1 other words
        column = tf.range(width)[tf.newaxis, tf.newaxis, :]

        # The latest block of KB results: result lines after the last other line that precedes the newest result.
        newest_result = last_index(result)
        before = last_index((position < newest_result[:, tf.newaxis]) & ~result & (user | bot))
        inside = result & (position > before[:, tf.newaxis])
        single = tf.equal(count, 3)  # "name R_attribute value" with a one-word value
        fact_words = (tf.equal(column, 0) | (tf.equal(column, 2) & single[..., tf.newaxis]))

        # Ratings of the latest results: a name's newest rating line; ranked best first, ties newest first.
        names = tf.strings.to_hash_bucket_fast(words[:, :, 0], 2**62)
        rated = inside & is_fact & tf.equal(words[:, :, 1], "R_rating")
        value_text = tf.where(single, words[:, :, 2], "")
        digits = tf.strings.regex_full_match(value_text, "[0-9]+")
        rating = tf.strings.to_number(tf.where(digits, value_text, "0"), tf.float64)  # int(value) if isdigit, else 0
        # Over the rated lines and their names only, not [B, L, L'] masks of every pair of lines (task 6: 200 lines).
        # A name's newest rating line is "first"; its rank is its place among its dialog's first lines by rating,
        # best first, ties newest first.
        rated_at = tf.where(rated)  # [n, 2] (dialog, line), row-major
        same_name = _pair_ids(rated_at[:, 0], tf.gather_nd(names, rated_at))
        newest = tf.math.unsorted_segment_max(rated_at[:, 1], same_name, tf.shape(rated_at)[0])
        first = tf.scatter_nd(rated_at, tf.equal(rated_at[:, 1], tf.gather(newest, same_name)), [batch, length])
        first_at = tf.where(first)  # [m, 2]
        order = tf.argsort(-first_at[:, 1], stable=True)  # newest first, then best rating, then by dialog
        order = tf.gather(order, tf.argsort(-tf.gather(tf.gather_nd(rating, first_at), order), stable=True))
        order = tf.gather(order, tf.argsort(tf.gather(first_at[:, 0], order), stable=True))
        dialog_starts = tf.cumsum(tf.math.bincount(tf.cast(first_at[:, 0], tf.int32), minlength=batch,
                                                   maxlength=batch), exclusive=True)
        place = tf.range(tf.size(order)) - tf.gather(dialog_starts, tf.gather(first_at[:, 0], order))
        first_rank = tf.scatter_nd(order[:, tf.newaxis], place, tf.shape(order))  # [m]
        rank = tf.scatter_nd(first_at, first_rank, [batch, length])  # [B, L] (0 where not first)
        name_ids = ids[:, :, 0]
        rank_score = tf.where(first, 1.0 / (1.0 + tf.cast(rank, tf.float32)), 0.0)
        # The best-rated result the bot never said (by word hash: names outside the lexicon count too): a first
        # line's (dialog, name) among the (dialog, word) of the bot's words.
        word_line = tf.cast(ragged.values.value_rowids(), tf.int32)  # [T] each word's line, dialog-major
        from_bot = tf.gather(tf.reshape(bot, [-1]), word_line)
        bot_dialogs = tf.boolean_mask(word_line // length, from_bot)
        bot_hashes = tf.strings.to_hash_bucket_fast(tf.boolean_mask(ragged.flat_values, from_bot), 2**62)
        keys = _pair_ids(tf.concat([tf.cast(bot_dialogs, tf.int64), first_at[:, 0]], axis=0),
                         tf.concat([bot_hashes, tf.gather_nd(names, first_at)], axis=0))
        said = tf.concat([[-1], tf.sort(keys[:tf.size(bot_hashes)])], axis=0)  # -1: never found, never empty
        asked = keys[tf.size(bot_hashes):]
        offered = tf.equal(tf.gather(said, tf.minimum(tf.searchsorted(said, asked), tf.size(said) - 1)), asked)
        candidates_rank = tf.tensor_scatter_nd_update(tf.fill([batch, length], 2**30), first_at,
                                                      tf.where(offered, 2**30, first_rank))
        best = tf.argmin(candidates_rank, axis=1, output_type=tf.int32)
        best_value = tf.where(tf.reduce_min(candidates_rank, axis=1) < 2**30,
                              tf.gather(name_ids, best, batch_dims=1), -1)

        # The restaurant on offer: the first name in the newest bot line that names one.
        name_word = bot[..., tf.newaxis] & tf.gather(self.is_name, tf.where(ids >= 0, ids, values))
        key = tf.where(name_word, position[..., tf.newaxis] * width + (width - 1 - column), -1)
        flat = tf.reshape(key, [batch, -1])
        on_offer = tf.where(tf.reduce_max(flat, axis=1) >= 0,
                            tf.gather(tf.reshape(ids, [batch, -1]), tf.argmax(flat, axis=1, output_type=tf.int32),
                                      batch_dims=1), -1)

        # Attributes: a name's newest KB result line of each kind, else the KB file (see attribute()).
        kind = self.kind_index.lookup(tf.strings.regex_replace(words[:, :, 1], "^R_", ""))
        stated = result & is_fact & (name_ids >= 0) & (kind >= 0)
        span = tf.cast(length + 1, tf.int64)
        key = tf.cast((tf.range(batch)[:, tf.newaxis] * values + name_ids) * kinds + kind, tf.int64)
        newest_first = tf.reshape(tf.where(stated, key * span + tf.cast(length - position, tf.int64), -1), [-1])
        order = tf.argsort(newest_first)
        facts = (tf.gather(newest_first, order), tf.gather(tf.reshape(tf.where(single, ids[:, :, 2], -1), [-1]), order),
                 span)
        of_offer = self.attribute(facts, tf.range(batch)[:, tf.newaxis], on_offer[:, tf.newaxis],
                                  tf.range(kinds)[tf.newaxis, :])  # [B, K]

        # The values the batch holds: its words' and the KB attributes of the restaurants on offer. Every other
        # value has the features of one no dialog touched; the table is over the held values alone.
        held_ids = tf.concat([tf.reshape(ids, [-1]), tf.reshape(of_offer, [-1])], axis=0)
        in_batch = tf.math.bincount(tf.where(held_ids >= 0, held_ids, values), minlength=values + 1,
                                    maxlength=values + 1, binary_output=True)[:values] > 0  # [V]
        batch_values = tf.cast(tf.where(in_batch)[:, 0], tf.int32)  # [U] ascending
        held = tf.size(batch_values)
        column_of = tf.concat([tf.where(in_batch, tf.cumsum(tf.cast(in_batch, tf.int32), exclusive=True), held),
                               [held + 1]], axis=0)  # [V + 1]
        local = tf.where(ids >= 0, tf.gather(column_of, tf.maximum(ids, 0)), -1)  # [B, L, S] column, -1 no value
        local_names = local[:, :, 0]

        # Said by the user / the bot, how many of its turns ago (KB results are not turns).
        user_turn, bot_turn = user & ~result, bot
        user_ago = tf.cumsum(tf.cast(user_turn, tf.int32), axis=1, exclusive=True, reverse=True)
        bot_ago = tf.cumsum(tf.cast(bot_turn, tf.int32), axis=1, exclusive=True, reverse=True)
        user_min = _per_value(local, user_turn[..., tf.newaxis], user_ago[..., tf.newaxis], held, "min")
        bot_min = _per_value(local, bot_turn[..., tf.newaxis], bot_ago[..., tf.newaxis], held, "min")
        user_ever, bot_ever = user_min < _NONE, bot_min < _NONE
        in_query = tf.equal(user_min, 0)
        user_recency = tf.where(user_ever, tf.exp(-tf.cast(user_min, tf.float32)), 0.0)
        bot_recency = tf.where(bot_ever, tf.exp(-tf.cast(bot_min, tf.float32)), 0.0)

        # The arguments of the latest API call that has some.
        call = bot & tf.equal(words[:, :, 0], API_CALL_PREFIX) & (count > 1)
        latest_call = tf.equal(position, last_index(call)[:, tf.newaxis]) & call
        in_call = _per_value(local, latest_call[..., tf.newaxis] & (column >= 1), tf.constant(1), held, "max") > 0
        in_results = _per_value(local, (inside & is_fact)[..., tf.newaxis] & fact_words, tf.constant(1), held,
                                "max") > 0
        rating_rank = tf.maximum(_per_value(local_names, first, rank_score, held, "max"), 0.0)
        stated_names = _per_value(local_names, stated, tf.constant(1), held, "max") > 0  # [B, U]
        kind_of = tf.gather(self.value_kind, batch_values)
        offer_value = tf.gather(of_offer, tf.maximum(kind_of, 0), axis=1)  # [B, U]
        attribute_of_offer = ((kind_of >= 0)[tf.newaxis, :] & (on_offer >= 0)[:, tf.newaxis]
                              & tf.equal(offer_value, batch_values[tf.newaxis, :]))

        every = batch_values[tf.newaxis, :]
        columns = {
            "in_query": in_query, "user_recency": user_recency, "user_ever": user_ever,
            "bot_recency": bot_recency, "bot_ever": bot_ever, "in_api_call": in_call, "in_results": in_results,
            "rating_rank": rating_rank, "best_not_offered": tf.equal(every, best_value[:, tf.newaxis]),
            "on_offer": tf.equal(every, on_offer[:, tf.newaxis]), "attribute_of_on_offer": attribute_of_offer,
            "known": tf.ones([batch, held], tf.bool), "own_attribute": tf.zeros([batch, held], tf.bool),
        }
        # Value-major [B, U + 2, F], so that a candidate's slot is one row of F features; then a value outside
        # the batch (known, nothing else) and the padding (nothing).
        features = len(self.feature_names)
        outside = tf.constant([[float(name == "known") for name in self.feature_names], [0.0] * features])
        table = tf.concat([tf.stack([tf.cast(columns[name], tf.float32) for name in self.feature_names], axis=-1),
                           tf.broadcast_to(outside, [batch, 2, features])], axis=1)
        # The values whose features differ from a value the dialog never touched (every context column).
        touched = (user_ever | bot_ever | in_call | in_results | (rating_rank > 0) | columns["best_not_offered"]
                   | columns["on_offer"] | attribute_of_offer)
        return (table, facts, tf.pad(stated_names, [[0, 0], [0, 2]]), tf.pad(touched, [[0, 0], [0, 2]]),
                column_of)

    def attribute(self, facts: tuple[tf.Tensor, tf.Tensor, tf.Tensor] | None, rows: tf.Tensor, names: tf.Tensor,
                  kinds: tf.Tensor) -> tf.Tensor:
        """The value index of attribute ``kinds`` of restaurant ``names`` in dialog ``rows`` (broadcast together;
        -1: none, or a value outside the lexicon): the newest of the dialog's KB results that states it, else the
        KB file's. ``facts`` are :meth:`value_table`'s (None: the KB file alone)."""
        shape = tf.broadcast_dynamic_shape(tf.broadcast_dynamic_shape(tf.shape(rows), tf.shape(names)), tf.shape(kinds))
        rows, names, kinds = (tf.broadcast_to(t, shape) for t in (rows, names, kinds))
        known = tf.gather_nd(self.kb, tf.stack([tf.maximum(names, 0), tf.maximum(kinds, 0)], axis=-1))
        known = tf.where((names >= 0) & (kinds >= 0), known, -1)
        if facts is None:
            return known
        keys, stated, span = facts  # (row, name, kind) * span + age, sorted: a key's newest line first
        query = tf.cast((rows * self.value_count + names) * self.kind_count + kinds, tf.int64) * span
        found = tf.minimum(tf.searchsorted(keys, tf.reshape(query, [-1]), side="left"), tf.size(keys) - 1)
        found = tf.reshape(found, tf.shape(query))
        hit = (names >= 0) & (kinds >= 0) & tf.equal(tf.gather(keys, found) // span, query // span)
        return tf.where(hit, tf.gather(stated, found), known)

    def features(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor, ids: tf.Tensor) -> tf.Tensor:
        """[B, G, F]: the summed value features of each candidate ``ids`` [B, G], and own_attribute."""
        table, facts, _, _, column_of = self.value_table(memory, memory_speaker, query)
        rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, tf.newaxis], tf.shape(ids))
        pairs = self._pair_features(table, column_of, facts, tf.reshape(rows, [-1]), tf.reshape(ids, [-1]))
        return tf.reshape(pairs, tf.concat([tf.shape(ids), [len(self.feature_names)]], axis=0))

    def _pair_features(self, table: tf.Tensor, column_of: tf.Tensor,
                       facts: tuple[tf.Tensor, tf.Tensor, tf.Tensor] | None, rows: tf.Tensor, ids: tf.Tensor
                       ) -> tf.Tensor:
        """[N, F]: the features of candidate ``ids[n]`` in dialog ``rows[n]``, from ``table`` [B, columns, F]
        (``column_of`` [V + 1]: each value's column)."""
        slots = tf.gather(self.slots, ids)  # [N, W] value indices (V: none)
        flat = tf.reshape(table, [-1, len(self.feature_names)])  # [B * columns, F]
        at = rows[:, tf.newaxis] * tf.shape(table)[1] + tf.gather(column_of, slots)
        summed = tf.reduce_sum(tf.gather(flat, at), axis=1)  # [N, F]: whole rows gathered
        if "own_attribute" not in self.feature_names:
            return summed
        # Only the candidates that name a restaurant can hold its attributes: the KB search runs over those pairs
        # alone (most touched pairs are API calls, which name none).
        own = tf.gather(self.own, ids)  # [N]
        owned = tf.where(own >= 0)  # [n, 1]
        owned_slots = tf.gather_nd(slots, owned)  # [n, W]
        kind = tf.gather(self.value_kind, owned_slots)
        matches = (kind >= 0) & tf.equal(self.attribute(facts, tf.gather_nd(rows, owned)[:, tf.newaxis],
                                                        tf.gather_nd(own, owned)[:, tf.newaxis], kind), owned_slots)
        own_count = tf.scatter_nd(owned, tf.reduce_sum(tf.cast(matches, tf.float32), axis=1),
                                  tf.shape(own, out_type=tf.int64))
        column = self.feature_names.index("own_attribute")
        return tf.concat([summed[:, :column], own_count[:, tf.newaxis], summed[:, column + 1:]], axis=-1)

    def every_candidate(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor
                        ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The features of every candidate in each dialog, sparsely: ``static`` [C, F], the features a candidate
        has in a dialog that touches none of its values (its slot count, the KB file's own attributes), and the
        (dialog, candidate) ``pairs`` [N, 2] that differ, with their ``features`` [N, F]. A task-5 turn touches
        about 390 of 4,212 candidates (nearly all API calls), so the filler scores those, not every candidate of
        every dialog."""
        table, facts, stated_names, touched, column_of = self.value_table(memory, memory_speaker, query)
        own = tf.gather(column_of, tf.where(self.own >= 0, self.own, self.value_count))  # [C + 1]
        # Candidates first, [C + 1, B]: whole rows of the [columns, B] transposes gathered, not single values.
        dynamic = tf.gather(tf.transpose(stated_names), own)  # facts about a candidate's own restaurant
        dynamic |= tf.reduce_any(tf.gather(tf.transpose(touched), tf.gather(column_of, self.slots)), axis=1)
        # [N, 2] (dialog, candidate), dialog by dialog; not the padding row.
        pairs = tf.cast(tf.where(tf.transpose(dynamic[:-1])), tf.int32)
        features = self._pair_features(table, column_of, facts, pairs[:, 0], pairs[:, 1])
        return self.static_features(), pairs, features

    def static_features(self) -> tf.Tensor:
        """[C, F]: each candidate's features in a dialog that touches none of its values."""
        count = tf.shape(self.own)[0] - 1
        known = [float(name == "known") for name in self.feature_names]  # an untouched value is only known
        static_table = tf.constant([[known, [0.0] * len(known)]])  # [1, 2, F]: any value; the padding
        column_of = tf.concat([tf.zeros([self.value_count], tf.int32), [1]], axis=0)
        return self._pair_features(static_table, column_of, None, tf.zeros([count], tf.int32), tf.range(count))


MASKED = -1e9  # a template's logit under the action mask


def chosen_first(in_chosen: tf.Tensor, fill: tf.Tensor, scores: tf.Tensor, k: int) -> tf.Tensor:
    """[B, k] candidate indices: those ``in_chosen`` [B, C] first, by ``fill`` (ties: lower index first), then the
    others by ``scores``: the top k of each, merged (no sort of every candidate)."""
    first = tf.math.top_k(tf.where(in_chosen, fill, -np.inf), k=k).indices
    others = tf.math.top_k(tf.where(in_chosen, -np.inf, scores), k=k).indices
    size = tf.reduce_sum(tf.cast(in_chosen, tf.int32), axis=1, keepdims=True)  # [B, 1]
    position = tf.range(k)[tf.newaxis, :]
    return tf.where(position < size, first, tf.gather(others, tf.maximum(position - size, 0), batch_dims=1))


def calls_chosen(logits: tf.Tensor, is_call: tf.Tensor, bias: float) -> tf.Tensor:
    """[B] whether the API-call templates (``is_call`` [T]), as one action, win: their summed probability times
    exp(``bias``) above the best other template's."""
    log_p = tf.nn.log_softmax(logits)
    return tf.reduce_logsumexp(tf.where(is_call, log_p, -np.inf), axis=1) + bias \
        > tf.reduce_max(tf.where(is_call, -np.inf, log_p), axis=1)


def delexicalise(types: tf.lookup.StaticHashTable, text: tf.Tensor) -> tf.Tensor:
    """``EntityLexicon.delexicalise`` in ops: each entity word (split on single spaces) becomes ``<type>``."""
    words = tf.strings.split(text, sep=" ")
    typed = types.lookup(words.flat_values)
    joined = tf.strings.reduce_join(words.with_flat_values(tf.where(tf.equal(typed, ""), words.flat_values, typed)),
                                    axis=-1, separator=" ")
    if isinstance(joined, tf.RaggedTensor):  # a [B, M] text splits into [B, (M), (words)]: rows of equal length
        joined = joined.to_tensor()
    return tf.ensure_shape(joined, text.shape)  # the shape stated for the graph optimiser (see template_inputs)


class TemplateServingModule(DialogServingModule):
    """The template ranker as one servable module, with the signatures of :class:`DialogServingModule`.

    The template model reads the history as ``models.babi.template.lexicon.template_example`` makes it
    (delexicalised, KB results reduced to their rating lines, the query after the tracked dialog state's words);
    the filler scores every candidate from its filling features. The responses are the best template's candidates,
    best filled first, then every other candidate by log p(template) + log p(candidate | template); ``scores`` are
    that sum;
    ``template`` is the chosen template; ``attention`` is the template model's, put back on the raw memory (most
    recent first; dropped KB lines 0)."""

    def __init__(self, types: dict[str, str], attributes: dict[str, dict[str, str]], candidates: Sequence[str],
                 template_spec: FeatureSpec, template_model: MemN2N, filler: keras.Model,
                 feature_names: Sequence[str], top_k: int = 10, state: StateSpec | None = None,
                 call_bias: float | None = None, waits: Mapping[str, Sequence[str]] | None = None) -> None:
        super().__init__(template_spec, template_model, top_k)
        hold_models(self, filler=filler)
        self.tracker = DialogStateTracker(state) if state is not None else None
        self.call_bias = call_bias  # None: the API calls are templates like the others (no action)
        self.filling = FillingFeatures(types, attributes, candidates, feature_names)
        static = self.filling.static_features()  # scored once here: no dialog changes them
        self.alone = tf.constant(filler({"features": static[tf.newaxis], "mask": tf.ones([1, static.shape[0]])})[0])
        words = sorted(types)
        self.type_words = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(words or [""], tf.string),
                                                tf.constant([f"<{types[w]}>" for w in words] or [""])), "")
        templates = list(template_spec.candidates)
        self.templates = tf.constant(templates)
        # HCN's action mask (``waits``: template -> the entity kinds it waits for, TemplateRanker.learn_waits): a
        # template cannot be said before some line of the dialog holds a value of each. None: no mask.
        kinds = sorted({f"<{kind}>" for kind in types.values()})
        self.action_mask = waits is not None
        self.kind_of = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant(kinds or [""]), tf.constant(list(range(len(kinds))) or [-1], tf.int32)), -1)
        self.kind_count = max(len(kinds), 1)
        self.needs = tf.constant(np.array([[kind in (waits or {}).get(t, ()) for kind in kinds] or [False]
                                           for t in templates], bool).reshape(len(templates), self.kind_count))
        self.template_of = tf.constant([templates.index(t) for t in (
            " ".join(f"<{types[w]}>" if w in types else w for w in c.split(" ")) for c in candidates)], tf.int32)
        self.candidates = tf.constant(list(candidates))
        self.top_k = min(top_k, len(candidates))
        # With a tracked state, the API calls are one action (HCN's): their templates' probabilities add up, and
        # the call that asks for the tracked state is the answer (the filler's best call when none does).
        self.is_call = tf.constant([is_api_call(t) for t in templates])
        # (A call's arguments past the tracked slots, which no training call gave a value, must be R_ words.)
        slots = len(state.slots) if state is not None else 0
        calls = [i for i, c in enumerate(candidates) if is_api_call(c) and len(c.split(" ")) > slots
                 and all(w.startswith("R_") for w in c.split(" ")[slots + 1:])]
        self.call_ids = tf.constant(calls, tf.int32)
        self.call_arguments = tf.reshape(tf.constant([candidates[i].split(" ")[1:slots + 1] for i in calls], tf.string),
                                         [len(calls), slots])
        self._spec_json = json.dumps({"template_spec": json.loads(template_spec.to_json()), "entity_types": types,
                                      "attributes": attributes, "filling_features": list(feature_names),
                                      "dialog_state": json.loads(state.to_json()) if state is not None else None,
                                      "call_bias": self.call_bias,
                                      "waits": {t: list(k) for t, k in waits.items()} if waits is not None else None})

    def template_inputs(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor,
                        state: tuple[tf.Tensor, tf.Tensor, tf.Tensor] | None = None
                        ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """The template model's memory, speakers and query (after the words of the tracked ``state``, when
        there is one), and which raw memory lines it keeps [B, M]."""
        shape = tf.shape(memory)
        words = tf.strings.split(memory, sep=" ")[:, :, :2].to_tensor(default_value="",
                                                                       shape=tf.stack([shape[0], shape[1], 2]))
        result = tf.equal(memory_speaker, "user") & tf.strings.regex_full_match(memory, KB_RESULT_PATTERN)
        kept = tf.not_equal(memory_speaker, "") & ~(result & tf.not_equal(words[:, :, 1], "R_rating"))
        delexicalised = delexicalise(self.type_words, memory)
        # Rank 2 stated for the graph optimiser's cost model (it logs a warning on every trace otherwise).
        memory_t = tf.ragged.boolean_mask(delexicalised, kept).to_tensor(default_value="")
        speaker_t = tf.ragged.boolean_mask(memory_speaker, kept).to_tensor(default_value="")
        memory_t, speaker_t = tf.ensure_shape(memory_t, [None, None]), tf.ensure_shape(speaker_t, [None, None])
        query_t = delexicalise(self.type_words, query)
        if state is not None:
            query_t = tf.strings.join([self.tracker.describe(*state), query_t], separator=" ")
        return memory_t, speaker_t, query_t, kept

    def rank(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        state = self.tracker.state(memory, memory_speaker, query) if self.tracker is not None else None
        memory_t, speaker_t, query_t, kept = self.template_inputs(memory, memory_speaker, query, state)
        logits, attention = self.model.predict_with_attention(self.featurizer(memory_t, speaker_t, query_t))
        if self.action_mask:  # a large finite loss, so that every score stays a number
            logits = tf.where(self.allowed(memory, query), logits, MASKED)
        chosen = tf.argmax(logits, axis=1, output_type=tf.int32)  # [B]
        fill = self.fill_scores(memory, memory_speaker, query)  # [B, C]
        first = tf.zeros_like(fill, tf.bool)  # [B, C] the candidate put first whatever the filler says
        if state is not None and self.call_bias is not None:
            chosen, first = self.act(logits, state, tf.shape(fill)[1])
        # log p(candidate | template): a softmax of the filler's scores within each template's candidates.
        templates = tf.shape(self.templates)[0]
        by_template = tf.transpose(fill)  # [C, B]
        peak = tf.math.unsorted_segment_max(by_template, self.template_of, templates)
        total = tf.math.unsorted_segment_sum(tf.exp(by_template - tf.gather(peak, self.template_of)), self.template_of,
                                             templates)
        log_fill = fill - tf.transpose(tf.gather(peak + tf.math.log(total), self.template_of))
        scores = tf.gather(tf.nn.log_softmax(logits), self.template_of, axis=1) + log_fill
        # The chosen template's candidates first, by the filler's score; then the others by their score.
        in_chosen = tf.equal(self.template_of[tf.newaxis, :], chosen[:, tf.newaxis])
        top = chosen_first(in_chosen, tf.where(first, np.inf, fill), scores, self.top_k)
        return {"responses": tf.gather(self.candidates, top), "scores": tf.gather(scores, top, batch_dims=1),
                "indices": top, "template": tf.gather(self.templates, chosen),
                "attention": self.raw_attention(attention, kept, tf.not_equal(memory_speaker, ""))}

    def allowed(self, memory: tf.Tensor, query: tf.Tensor) -> tf.Tensor:
        """[B, T] whether each template may be said (the action mask): every entity kind it waits for has a value
        in some line of the dialog (the history, its KB results, the query)."""
        words = tf.strings.split(tf.concat([memory, query[:, tf.newaxis]], axis=1), sep=" ")  # [B, L, (W)]
        kind = self.kind_of.lookup(self.type_words.lookup(words.flat_values))
        said = tf.reduce_max(tf.reduce_max(words.with_flat_values(tf.one_hot(kind, self.kind_count)), axis=2),
                             axis=1) > 0  # [B, K]
        return tf.reduce_all(~self.needs[tf.newaxis] | said[:, tf.newaxis, :], axis=2)

    def act(self, logits: tf.Tensor, state: tuple[tf.Tensor, tf.Tensor, tf.Tensor], candidates: tf.Tensor
            ) -> tuple[tf.Tensor, tf.Tensor]:
        """The chosen template [B] and [B, C] the state's API call, to be put first (its score stays the model's).

        An API call is made when the API-call templates' summed probability, times exp(``call_bias``), beats the
        best other template: split over one template per pattern of known and open arguments, the call lost to
        a single slot question on new callers (task 6, held-out folds). Its arguments are the tracked state's
        (:meth:`DialogStateTracker.calls`) when a candidate asks for exactly that; else the best call template's
        best-filled candidate."""
        calling = calls_chosen(logits, self.is_call, self.call_bias)  # [B]
        best = lambda allowed: tf.argmax(tf.where(allowed, logits, -np.inf), axis=1, output_type=tf.int32)  # noqa: E731
        asks = self.tracker.calls(state[0], state[1], self.call_arguments)  # [B, A]
        stated = tf.gather(self.call_ids, tf.argmax(tf.cast(asks, tf.int32), axis=1, output_type=tf.int32)) \
            if self.call_arguments.shape[0] else tf.zeros_like(calling, tf.int32)  # [B] (when any asks)
        use_state = calling & tf.reduce_any(asks, axis=1)
        chosen = tf.where(calling, tf.where(use_state, tf.gather(self.template_of, stated), best(self.is_call)),
                          best(~self.is_call))
        first = use_state[:, tf.newaxis] & tf.equal(tf.range(candidates)[tf.newaxis, :], stated[:, tf.newaxis])
        return chosen, first

    def fill_scores(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> tf.Tensor:
        """[B, C] the filler's score of every candidate: each candidate's score without dialog, and in each
        dialog those of the candidates it touches (:meth:`FillingFeatures.every_candidate`)."""
        _, pairs, features = self.filling.every_candidate(memory, memory_speaker, query)
        touched = self.filler({"features": features[tf.newaxis], "mask": tf.ones([1, tf.shape(features)[0]])})[0]
        everyone = tf.tile(self.alone[tf.newaxis, :], [tf.shape(query)[0], 1])
        return tf.tensor_scatter_nd_update(everyone, pairs, touched)

    @staticmethod
    def raw_attention(attention: tf.Tensor, kept: tf.Tensor, present: tf.Tensor) -> tf.Tensor:
        """[B, hops, M] attention over the raw memory, most recent first, from the template model's [B, hops, Mt]
        over the lines it kept (most recent first)."""
        slots = tf.shape(attention)[2]
        compact = tf.cumsum(tf.cast(kept, tf.int32), axis=1, exclusive=True, reverse=True)  # its slot, oldest first
        oldest_first = tf.where((kept & (compact < slots))[:, tf.newaxis, :],
                                tf.gather(attention, tf.minimum(compact, slots - 1), axis=2, batch_dims=1), 0.0)
        lines = tf.reduce_sum(tf.cast(present, tf.int32), axis=1)
        ago = tf.range(tf.shape(kept)[1])[tf.newaxis, :]
        source = lines[:, tf.newaxis] - 1 - ago
        recent_first = tf.gather(oldest_first, tf.maximum(source, 0), axis=2, batch_dims=1)
        return tf.where((source >= 0)[:, tf.newaxis, :], recent_first, 0.0)
