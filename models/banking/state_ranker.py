"""The state ranker (ours, beyond Majumdar et al.): a dialog state tracked from the dialog's own API calls and
results, delexicalised templates and learned filling, so that out-of-pattern dialogs are answered without a rule
per case.

What it knows by design, all learned from the training dialogs (:mod:`models.banking.slots`): which words are entity
values and of which slot type, the kinds of API result, the slot each request asks for. From these it tracks, for
every value and slot type of a dialog, four facts any dialog of the format has: was it said by the user and not yet
sent to an API since (pending), was it said in the last user turn, was it in the last API call or in the results since,
and what the latest result line about it said. No feature names a banking slot, API or challenge case. From outside
the corpus it knows how alike English words are (:mod:`models.word_vectors`, the ``word_vectors`` group): a word of
the last user turn that no training turn used ("nope", "thanks") adds its pretrained vector; and what a turn that gives
no value means (:mod:`models.sentence_encoder`, the ``sentence_vector`` group): "nope" lands beside "no", "thanks a
lot , bye" beside "thank you , goodbye", an input of the act term alone.

A candidate's score is the sum of three learned terms:

* **act term**: the dialog (the delexicalised last user turn, the words of the user's earlier turns, what the last
  line was, and the tracked state: every slot type's facts and how many types have each kind of latest result)
  against the candidate's act, its template with every slot type made one (``api_call check_<slot> <value>``;
  every request one act). Which act comes next ("check the value just given", "ask for a missing slot", the final
  call) is learned once for every slot, from the state;
* **template term**: the same dialog against the candidate's template (its entities replaced by their types), as a
  log-softmax within the templates of one act: it orders the templates of an act (which slot to ask for first) and
  cannot make one act win over another;
* **filling term**: a small network over the candidate's own features, shared by every candidate: the tracked facts
  of its values (``value_state``) and of its slot types, a request's the slot it asks for (``slot_state``).

Neither term reads the previous bot action's template: learned from it, the flows of training decided the next
action, and a flow training never showed (a compressed turn, two slots in an opening, another order, an unasked
slot, an extra value) was answered as the nearest training flow; read from the state, the same decisions
generalise. That choice, and the act term's, were made on the development challenge sets (``dev-OOP``), never on a
test file (docs/banking.md).

Feature groups, each of which an ablation removes: ``value_state``, ``slot_state`` (the filling term's inputs),
``history`` (the words, not the entities, of the user's earlier turns: the intent is said once, at the start),
``word_vectors`` (the pretrained vectors of the last user turn's words, summed), ``sentence_vector`` (the pretrained
sentence encoder's vector of the last user turn when it gives no value, read by the act term; left out with the
whole vector at ``word_dropout`` in training),
``last_line`` (what the last line was: the user's turn, a result of some kind, a bot line), ``state_counts`` (how
many slot types have each kind of latest result, how many values are pending and how many beside the last call: the
dialog's progress without naming a slot) and ``dialog_state`` (each slot type's facts: pending, in the last user
turn, its latest result), the act and template terms' inputs, ``act_term`` (the act term, its within-act
normalisation with it), ``beside_call`` (a pending value said in the user turn that gave a value of the last API
call: the caller gave it with the value just checked, and a bot checks it next, where a value said before another
turn's check waits to be asked for again; a value's fact and its slot type's), ``goal`` (a slot type missing from
the goal: every goal learned from training's dialogs that takes all the slot types known so far takes it, and it
has no value yet; a slot type's fact, and how many there are in the state counts), ``asked`` (a slot type the bot
asked for is known to be in the goal, given or not: the bot's requests say the intent where the user's words
cannot) and ``act_mask`` (at ranking, what
training's bots never did in the example's situation goes after what they did: the situation, whether a value waits
beside the last call, whether the last user turn gave a pending value and the kind of a result on the last line; what
a candidate does, its act and the kind of its values; :func:`learn_act_mask`). Training leaves each word of the
last user turn out at a rate (``word_dropout``), so that no flow rests on one wording; the earlier turns' words
(``history_dropout``, none by default) carry the opening's intent. The featurisation runs in
TensorFlow ops inside the exported SavedModel, so training, the tables and TF Serving score the same way; training
computes each example's facts once, not once per step.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from data.banking.labels import DEV_CHALLENGES
from data.corpus import KB_RESULT_PATTERN, SILENCE
from models.banking.slots import SlotLexicon
from models.examples import TaskData, TurnExample, batches_by_memory_length
from models.features import lookup_table
from models.sentence_encoder import SentenceEncoder
from models.serving.export import DialogServingModule, export, hold_models, prepare_output
from models.word_vectors import DIM as VECTOR_DIM
from models.word_vectors import word_vectors

FEATURE_GROUPS = ("value_state", "slot_state", "history", "last_line", "state_counts", "dialog_state", "act_term",
                  "beside_call", "goal", "act_mask", "asked", "word_vectors", "sentence_vector")
VALUE_FLAGS = 5  # pending, in the query, in the last call, in the results since, beside the last call
TYPE_FLAGS = 4  # any value pending, any in the query, any beside the last call, missing from the goal
COUNT_BUCKETS = 5  # a count of slot types or values: 0, 1, 2, 3, 4 or more
# A candidate's values, for the act mask: none; some without a fact in the dialog (never said by the user, called or
# given a result of a known kind); every one in the last call (checked again); the others.
VALUE_PATTERNS = 4
EVAL_BATCH = 512  # the development splits, scored after every epoch: less a row than 32 (state_ranker_speed.py)


@dataclass(frozen=True)
class StateConfig:
    """Its training: the paper's networks' loop (Adam, batches of 32, at most 20 epochs, best epoch on dev, stop
    after 3 without progress) and the sizes of its two terms."""

    epochs: int = 20
    patience: int = 3
    learning_rate: float = 0.001
    batch_size: int = 32
    dim: int = 64
    filler_units: int = 32
    word_dropout: float = 0.5  # the last user turn's words
    # The earlier user turns' words are kept whole: the opening's intent word is all that tells two intents of one
    # slot set apart (an account's balance or its limit). Chosen on the development sets (docs/banking.md).
    history_dropout: float = 0.0
    seed: int = 0
    removed: tuple[str, ...] = ()  # feature groups left out (the ablations)

    def __post_init__(self) -> None:
        object.__setattr__(self, "removed", tuple(self.removed))  # a list, read back from a Trainer's JSON config
        unknown = set(self.removed) - set(FEATURE_GROUPS)
        if unknown:
            raise ValueError(f"unknown feature groups {sorted(unknown)}; choose from {list(FEATURE_GROUPS)}")
        for name in ("word_dropout", "history_dropout"):
            rate = getattr(self, name)
            if not isinstance(rate, int | float) or not 0 <= rate < 1:
                raise ValueError(f"{name} must be a rate in [0, 1), got {rate!r}")


def _max_per(ids: tf.Tensor, mask: tf.Tensor, data: tf.Tensor, count: int) -> tf.Tensor:
    """[B, count]: the largest ``data`` over the positions of ``ids`` ([B, ...] indices in [0, count)) where
    ``mask`` holds, per batch row and index; -1 where there is none (``data`` is never negative)."""
    batch = tf.shape(ids)[0]
    rows = tf.reshape(tf.range(batch), tf.concat([[batch], tf.ones([tf.rank(ids) - 1], tf.int32)], 0))
    segment = tf.where(mask & (ids >= 0), rows * count + ids, batch * count)
    out = tf.math.unsorted_segment_max(tf.broadcast_to(data, tf.shape(ids)), segment, batch * count + 1)[:-1]
    return tf.maximum(tf.reshape(out, [batch, count]), -1)


def _per_type(values: tf.Tensor, value_type: tf.Tensor, types: int) -> tf.Tensor:
    """[B, V] int -> [B, T]: the largest over the values of each type (-1 where none)."""
    out = tf.math.unsorted_segment_max(tf.transpose(values), value_type, types)
    return tf.maximum(tf.transpose(out), -1)


def act_of(template: str, lexicon: SlotLexicon) -> str:
    """A template's act: every request one act; otherwise each entity type made ``<value>`` and each word naming a
    slot type after ``_`` (``check_amount``) made ``<slot>``, longest type first. Learned names only: no slot or API
    is named here."""
    if template in lexicon.request_types:
        return "<request>"
    types = sorted(lexicon.slot_types, key=len, reverse=True)
    words = []
    for word in template.split(" "):
        if word.startswith("<") and word.endswith(">"):
            words.append("<value>")
            continue
        words.append(next((word[:-len(t)] + "<slot>" for t in types if word.endswith(f"_{t}")), word))
    return " ".join(words)


def within_acts(logits: tf.Tensor, template_acts: tf.Tensor, acts: int) -> tf.Tensor:
    """[B, templates] logits -> their log-softmax within each act (``template_acts``: each template's act): the
    probabilities of one act's templates sum to 1, whatever another act's are."""
    by_act = tf.transpose(logits)  # [templates, B]
    top = tf.math.unsorted_segment_max(by_act, template_acts, acts)
    total = tf.math.unsorted_segment_sum(tf.exp(by_act - tf.gather(top, template_acts)), template_acts, acts)
    return tf.transpose(by_act - tf.gather(top + tf.math.log(total), template_acts))


def _counts(values: tf.Tensor) -> tf.Tensor:
    """[B, ...] counts -> [B, ..., COUNT_BUCKETS] one-hot (the last bucket: that many or more)."""
    return tf.one_hot(tf.minimum(values, COUNT_BUCKETS - 1), COUNT_BUCKETS)


def _masked_mean(features: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """[..., P, F] over P where ``mask`` (broadcast to [..., P]) holds (0 where none)."""
    weights = tf.cast(mask, features.dtype)[..., tf.newaxis]
    return tf.math.divide_no_nan(tf.reduce_sum(features * weights, axis=-2), tf.reduce_sum(weights, axis=-2))


class StateFeatures(tf.Module):
    """Raw dialogs (``memory``/``memory_speaker`` [B, M], ``query`` [B]) to the state ranker's inputs in two steps:
    :meth:`facts`, what one example says (the delexicalised word ids of the query [B, W], the word ids of the earlier
    user turns, entities left out [B, H], the last line's kind [B, K + 3], the state counts [B, (K + 3) * 5], and
    the facts of every value [B, V, VALUE_FLAGS + K] and slot type [B, T, TYPE_FLAGS + K]), computed once per example
    in training; and :meth:`candidate_rows`, the candidates' features from those facts, in each step.

    A candidate's features are those of its values, its slot types and its category. In one example few values are
    said, checked or answered: a candidate none of whose values has a fact (no flag, no result) has the value
    features of every such candidate, and its row is its group's (its slot types and category).
    :meth:`candidate_rows` gives a row per group and one per candidate holding a value with a fact (a value with a
    fact is held by many calls' candidates, so these are not few: docs/results.md counts them), and the scorer's
    filling term runs on those alone; :meth:`candidate_features` is the same matrix written out whole for
    every candidate, the definition the compact rows are tested against (:func:`candidate_matrix`)."""

    def __init__(self, lexicon: SlotLexicon, candidates: Sequence[str], words: Sequence[str],
                 removed: Sequence[str] = (), name: str | None = None) -> None:
        super().__init__(name=name)
        values = sorted(lexicon.types)
        slot_types = lexicon.slot_types
        self.value_count, self.type_count, self.kind_count = len(values), len(slot_types), len(lexicon.kinds)
        self.goal_types = tf.constant(np.array([[t in goal for t in slot_types] for goal in lexicon.goals],
                                               np.float32).reshape(len(lexicon.goals), len(slot_types)))
        self.removed = tuple(removed)
        self.value_index = lookup_table(values, range(len(values)), -1)
        self.value_type = tf.constant([slot_types.index(lexicon.types[v]) for v in values], tf.int32)
        self.kind_index = lookup_table(lexicon.kinds, range(len(lexicon.kinds)), 0)
        # A request (learned: the slot type its next user turn gives) names a slot of the dialog's goal.
        requests = sorted(lexicon.request_types)
        self.request_type = lookup_table(requests, [slot_types.index(lexicon.request_types[r]) for r in requests], -1)
        self.type_words = lookup_table(values, [f"<{lexicon.types[v]}>" for v in values], "")
        # 0: padding, and a word training never showed: it adds nothing (an embedding no training step moved would
        # add noise, and unseen wordings are what the IT and OOT tests hold).
        self.word_index = lookup_table(["", *words], range(len(words) + 1), 0)
        # The pretrained vectors of the last user turn's words (models.word_vectors), row 0 for every other word:
        # what a word no training turn used is like. Not read at all when the group is left out: every word is
        # then row 0.
        known, vectors = (word_vectors() if "word_vectors" not in removed
                          else ((), np.zeros((0, VECTOR_DIM), np.float32)))
        self.vector_index = lookup_table(known, range(1, len(known) + 1), 0)
        self.vectors = np.concatenate([np.zeros((1, VECTOR_DIM), np.float32), vectors])
        # The pretrained sentence encoder (models.sentence_encoder) of the last user turn, its entities left out:
        # what the turn means as a whole ("nope" beside "no"). Not built when the group is left out.
        self.encoder = SentenceEncoder() if "sentence_vector" not in self.removed else None
        self.templates = sorted({lexicon.template(c) for c in candidates})
        self.template_of = tf.constant([self.templates.index(lexicon.template(c)) for c in candidates], tf.int32)
        # Each candidate's values (padding: V) and slot types (its values' and, for a request, the slot it asks for).
        value_of = {v: i for i, v in enumerate(values)}
        cand_values = [[value_of[w] for w in c.split(" ") if w in value_of] for c in candidates]
        cand_types = [[slot_types.index(lexicon.types[values[v]]) for v in vs] + (
            [slot_types.index(lexicon.request_types[lexicon.template(c)])]
            if lexicon.template(c) in lexicon.request_types else []) for c, vs in zip(candidates, cand_values,
                                                                                       strict=True)]
        self.cand_values, self.value_mask = self._padded(cand_values, len(values))
        # The slot types' facts are the same for every candidate with the same types (most of them): computed once
        # per distinct set, then gathered for each candidate.
        type_sets = {types: i for i, types in enumerate(sorted({tuple(ts) for ts in cand_types}))}
        self.type_set_of = tf.constant([type_sets[tuple(ts)] for ts in cand_types], tf.int32)
        self.set_types, self.set_mask = self._padded([list(ts) for ts in type_sets], len(slot_types))
        category = [(bool(vs), not vs and bool(ts), not vs and not ts)
                    for vs, ts in zip(cand_values, cand_types, strict=True)]
        self.category = tf.constant(category, tf.float32)
        # The groups (a candidate's slot types and category: its row when none of its values has a fact), and for
        # every value the candidates that hold it (the rows a fact of that value changes).
        groups = sorted({(type_sets[tuple(ts)], cat) for ts, cat in zip(cand_types, category, strict=True)})
        group_index = {group: i for i, group in enumerate(groups)}
        self.group_of = tf.constant([group_index[(type_sets[tuple(ts)], cat)]
                                     for ts, cat in zip(cand_types, category, strict=True)], tf.int32)
        self.group_set = tf.constant([group[0] for group in groups], tf.int32)
        self.group_category = tf.constant([group[1] for group in groups], tf.float32)
        holders: list[list[int]] = [[] for _ in values]
        for c, vs in enumerate(cand_values):
            for v in sorted(set(vs)):
                holders[v].append(c)
        self.holder_ids = tf.constant([c for held in holders for c in held], tf.int32)
        self.holder_splits = tf.constant(np.cumsum([0, *map(len, holders)]), tf.int64)
        self.candidate_count = len(candidates)
        self.acts = sorted({act_of(template, lexicon) for template in self.templates})
        self.template_acts = [self.acts.index(act_of(template, lexicon)) for template in self.templates]
        self.act_of = tf.constant([self.acts.index(act_of(lexicon.template(c), lexicon)) for c in candidates],
                                  tf.int32)

    @staticmethod
    def _padded(rows: list[list[int]], pad: int) -> tuple[tf.Tensor, tf.Tensor]:
        width = max((len(r) for r in rows), default=0) or 1
        table = np.full((len(rows), width), pad, np.int32)
        for i, row in enumerate(rows):
            table[i, :len(row)] = row
        return tf.constant(table), tf.constant(table != pad)

    def facts(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        """What each example says, before any candidate (the groups an ablation removes already zero)."""
        batch = tf.shape(query)[0]
        lines = tf.concat([memory, query[:, tf.newaxis]], axis=1)  # [B, L]: the query is the last line
        speakers = tf.concat([memory_speaker, tf.fill([batch, 1], "user")], axis=1)
        length = tf.shape(lines)[1]
        words = tf.strings.split(lines, sep=" ").to_tensor(default_value="")
        words = tf.pad(words, [[0, 0], [0, 0], [0, 3]], constant_values="")  # at least 3 words per line
        value = self.value_index.lookup(words)  # [B, L, W], -1: not an entity
        is_result = tf.equal(speakers, "user") & tf.strings.regex_full_match(lines, KB_RESULT_PATTERN)
        is_user = tf.equal(speakers, "user") & ~is_result & tf.not_equal(lines, SILENCE) & tf.not_equal(lines, "")
        is_bot = tf.equal(speakers, "bot")
        is_call = is_bot & tf.strings.regex_full_match(lines, "api_call .*")
        index = tf.broadcast_to(tf.range(length)[tf.newaxis, :], tf.shape(lines))  # [B, L]
        index3 = tf.broadcast_to(index[:, :, tf.newaxis], tf.shape(value))
        count = self.value_count
        last_user = _max_per(value, is_user[:, :, tf.newaxis], index3, count)  # [B, V]
        last_call = _max_per(value, is_call[:, :, tf.newaxis], index3, count)
        last_in_result = _max_per(value, is_result[:, :, tf.newaxis], index3, count)
        # Each result line's kind, and per value the latest result line about it (its first word) as line * K + kind.
        pair = tf.strings.join([words[:, :, 1], words[:, :, 2]], separator=" ")
        pair_kind = self.kind_index.lookup(pair)
        kind = tf.where(tf.not_equal(pair_kind, 0), pair_kind, self.kind_index.lookup(words[:, :, 1]))
        kind = tf.where(is_result, kind, 0)  # [B, L]
        code = index * self.kind_count + kind
        last_result = _max_per(value[:, :, 0], is_result, code, count)  # [B, V]
        call_line = tf.reduce_max(tf.where(is_call, index, -1), axis=1)[:, tf.newaxis]  # [B, 1]
        query_line = length - 1
        pending = (last_user >= 0) & (last_user > last_call)
        in_query = tf.equal(last_user, query_line)
        in_last_call = tf.equal(last_call, call_line) & (last_call >= 0)
        in_results = last_in_result > call_line
        # Beside the last call: pending, and said in a user turn that gave a value of the last API call. The caller
        # gave it with the value just checked; the bot checks it next, where a value said before some other turn's
        # check waits to be asked for again.
        call_turns = tf.where(in_last_call & ~pending, last_user, -2)  # [B, V]: the turns the call's values came in
        beside_call = pending & tf.reduce_any(
            tf.equal(last_user[:, :, tf.newaxis], call_turns[:, tf.newaxis, :]), axis=2)
        if "beside_call" in self.removed:
            beside_call = tf.zeros_like(beside_call)
        value_kind = tf.where(last_result >= 0, last_result % self.kind_count, 0)
        value_features = tf.concat([tf.cast(tf.stack([pending, in_query, in_last_call, in_results, beside_call], -1),
                                            tf.float32),
                                    tf.one_hot(value_kind, self.kind_count)], axis=-1)  # [B, V, VALUE_FLAGS + K]
        # Per slot type: any value pending, any said in the last user turn, any beside the last call, the latest
        # result about any value.
        types = self.type_count
        type_pending = _per_type(tf.cast(pending, tf.int32), self.value_type, types) > 0
        type_in_query = _per_type(tf.cast(in_query, tf.int32), self.value_type, types) > 0
        type_beside = _per_type(tf.cast(beside_call, tf.int32), self.value_type, types) > 0
        type_code = _per_type(last_result, self.value_type, types)
        type_kind = tf.where(type_code >= 0, type_code % self.kind_count, 0)
        # The slot types the bot asked for so far: they belong to the goal, given or not (a transfer asks for the
        # account, a cancelled transfer never does), whatever the words of the user's turns.
        asked = tf.reduce_max(tf.one_hot(tf.where(is_bot, self.request_type.lookup(lines), -1), types,
                                         dtype=tf.int32), axis=1) > 0  # [B, T]
        if "asked" in self.removed:
            asked = tf.zeros_like(asked)
        given = type_pending | (type_code >= 0)
        missing = self._missing(given, given | asked)
        type_features = tf.concat([tf.cast(tf.stack([type_pending, type_in_query, type_beside, missing], -1),
                                           tf.float32),
                                   tf.one_hot(type_kind, self.kind_count)], axis=-1)  # [B, T, TYPE_FLAGS + K]
        # The last line before the query when the user said nothing: a result (its kind), a bot line, or none.
        last_memory = tf.reduce_max(tf.where(tf.not_equal(memory_speaker, ""), index[:, :-1], -1), axis=1)
        at = tf.maximum(last_memory, 0)[:, tf.newaxis]
        last_kind = tf.gather(kind, at, batch_dims=1)[:, 0]
        last_is_bot = tf.gather(is_bot, at, batch_dims=1)[:, 0]
        user_spoke = is_user[:, -1]
        last_line = tf.concat([tf.one_hot(tf.where(user_spoke | last_is_bot, 0, last_kind), self.kind_count),
                               tf.cast(tf.stack([user_spoke, ~user_spoke & last_is_bot, last_memory < 0], -1),
                                       tf.float32)], axis=-1)
        # The dialog's progress, no slot named: per result kind, how many slot types have it as their latest (kind 0:
        # none yet), and how many values are pending.
        kinds_of_types = tf.reduce_sum(tf.one_hot(tf.where(type_code >= 0, type_kind, 0), self.kind_count,
                                                  dtype=tf.int32), axis=1)  # [B, K]
        pending_values = tf.reduce_sum(tf.cast(pending, tf.int32), axis=1)[:, tf.newaxis]  # [B, 1]
        beside_values = tf.reduce_sum(tf.cast(beside_call, tf.int32), axis=1)[:, tf.newaxis]  # [B, 1]
        missing_types = tf.reduce_sum(tf.cast(missing, tf.int32), axis=1)[:, tf.newaxis]  # [B, 1]
        counts = _counts(tf.concat([kinds_of_types, missing_types, pending_values, beside_values], axis=1))
        state_counts = tf.reshape(counts, [batch, (self.kind_count + 3) * COUNT_BUCKETS])
        if "last_line" in self.removed:
            last_line = tf.zeros_like(last_line)
        if "state_counts" in self.removed:
            state_counts = tf.zeros_like(state_counts)
        query_split = tf.strings.split(query, sep=" ")
        typed = self.type_words.lookup(query_split)
        delexicalised = tf.where(tf.equal(typed, ""), query_split, typed)
        # What a turn that gives no value means ("nope", "thanks a lot , bye"): a turn that gives one is read by the
        # tracked state, and its few other words ("it is", "to ... please") would tie the flow to training's order.
        # Such a turn is encoded as the empty text, whose vector is zero (and which is not run through the network).
        gives_value = tf.reduce_any(tf.not_equal(typed, ""), axis=1)
        sentence = (self.encoder(tf.where(gives_value, "", tf.strings.reduce_join(delexicalised, axis=-1,
                                                                                  separator=" ")))
                    if self.encoder is not None else tf.zeros([batch, 0]))
        delexicalised_query = delexicalised.to_tensor(default_value="")
        query_words = self.word_index.lookup(delexicalised_query)
        vector_words = self.vector_index.lookup(delexicalised_query)
        # The words of the user's earlier turns, not their entities (the slot state is the filling term's).
        earlier = (is_user & (index < query_line))[:, :, tf.newaxis] & tf.equal(self.type_words.lookup(words), "")
        history = tf.reshape(tf.where(earlier, self.word_index.lookup(words), 0), [batch, -1])
        if "history" in self.removed:
            history = tf.zeros_like(history)
        return {"query_words": query_words, "vector_words": vector_words, "history_words": history,
                "sentence": sentence, "last_line": last_line,
                "state_counts": state_counts, "value_features": value_features, "type_features": type_features}

    def _missing(self, given: tf.Tensor, known: tf.Tensor) -> tf.Tensor:
        """[B, T] slot types given a value (pending or answered), and those known to be in the goal (given, or asked
        for by the bot) -> those the goal still needs: the types that every goal (learned,
        :attr:`SlotLexicon.goals`) holding all the known types takes, and that were not given. Nothing is missing
        before a slot is known, or when no goal holds them all. Whatever order the slots come in, the one left is
        missing (the request for it), where a model of the training flows knows only the order they had."""
        if "goal" in self.removed:
            return tf.zeros_like(given)
        outside = 1.0 - self.goal_types  # [A, T]
        some = tf.reduce_any(known, axis=1, keepdims=True)
        goals = tf.equal(tf.matmul(tf.cast(known, tf.float32), outside, transpose_b=True), 0) & some  # [B, A]
        needed = tf.equal(tf.matmul(tf.cast(goals, tf.float32), outside), 0) & tf.reduce_any(goals, axis=1,
                                                                                              keepdims=True)
        return needed & ~given

    @property
    def situations(self) -> int:
        """How many values :meth:`situation` takes (an upper bound: the last line's part takes K of K + 3)."""
        return 4 * (self.kind_count + 3)

    def situation(self, facts: dict[str, tf.Tensor]) -> tf.Tensor:
        """[B] int32: the situation the act mask is keyed on (:func:`learn_act_mask`): whether some value waits
        beside the last call, whether the last user turn gave a pending value, and the kind of the result the
        dialog's last line is (0 for any other line: the user's turn, a bot line, no memory; ``last_line``'s flags
        are not told apart). From the facts after the ablations: without ``beside_call`` or ``last_line`` the mask
        is keyed on less."""
        values = facts["value_features"]  # cached (uint8) or computed (float32): the flags are 0 or 1 either way
        beside = tf.reduce_any(values[:, :, 4] > 0, axis=1)
        fresh = tf.reduce_any((values[:, :, 0] > 0) & (values[:, :, 1] > 0), axis=1)
        last = tf.argmax(tf.cast(facts["last_line"], tf.float32), axis=1, output_type=tf.int32)
        return (tf.cast(beside, tf.int32) * 2 + tf.cast(fresh, tf.int32)) * (self.kind_count + 3) + last

    def uses(self, facts: dict[str, tf.Tensor], candidates: tf.Tensor) -> tf.Tensor:
        """[B, N] int32: what the candidates ([B, N] ids) would do, the act mask's other key: each one's act and
        what its values are in the example (:data:`VALUE_PATTERNS`), as ``act * VALUE_PATTERNS + pattern``."""
        values = facts["value_features"]  # [B, V, VALUE_FLAGS + K], uint8 or float32
        known = tf.reduce_any(values[:, :, :VALUE_FLAGS] > 0, axis=2) | tf.equal(values[:, :, VALUE_FLAGS], 0)
        called = values[:, :, 2] > 0
        places = tf.gather(self.cand_values, candidates)  # [B, N, P]; V: no value there
        held = tf.gather(self.value_mask, candidates)
        known_at = tf.gather(tf.pad(known, [[0, 0], [0, 1]]), places, batch_dims=1)
        called_at = tf.gather(tf.pad(called, [[0, 0], [0, 1]]), places, batch_dims=1)
        pattern = tf.where(~tf.reduce_any(held, axis=2), 0,
                           tf.where(tf.reduce_any(held & ~known_at, axis=2), 1,
                                    tf.where(tf.reduce_all(~held | called_at, axis=2), 2, 3)))
        return tf.gather(self.act_of, candidates) * VALUE_PATTERNS + pattern

    def _set_facts(self, type_features: tf.Tensor) -> tf.Tensor:
        """[B, sets, TYPE_FLAGS + K]: the mean facts of each distinct set of a candidate's slot types (zero when
        ``slot_state`` is removed)."""
        padded_types = tf.pad(type_features, [[0, 0], [0, 1], [0, 0]])
        of_types = tf.gather(padded_types, self.set_types, axis=1)  # [B, sets, P2, TYPE_FLAGS + K]
        facts = _masked_mean(of_types, self.set_mask[tf.newaxis])
        return tf.zeros_like(facts) if "slot_state" in self.removed else facts

    @staticmethod
    def _of_values(of_values: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
        """[..., P, VALUE_FLAGS + K] facts of a candidate's value places (``mask``: [..., P], a value there) ->
        [..., 2 * VALUE_FLAGS + K]: every value's flags, some value's flags, the mean latest result."""
        weights = tf.cast(mask, tf.float32)[..., tf.newaxis]
        has = tf.cast(tf.reduce_any(mask, axis=-1), tf.float32)[..., tf.newaxis]
        flags = of_values[..., :VALUE_FLAGS]
        every = tf.reduce_min(flags * weights + (1 - weights), axis=-2) * has
        some = tf.reduce_max(flags * weights, axis=-2)
        return tf.concat([every, some, _masked_mean(of_values[..., VALUE_FLAGS:], mask)], axis=-1)

    def candidate_rows(self, value_features: tf.Tensor, type_features: tf.Tensor) -> dict[str, tf.Tensor]:
        """The candidates' features, compactly: ``candidate_groups`` [B, G, F], each group's row (no value of its
        candidates has a fact); ``candidate_pairs`` [M, 2], the (example, candidate) pairs where some value of the
        candidate has a fact; ``candidate_active`` [M, F], their rows. :func:`candidate_matrix` writes them out as
        :meth:`candidate_features`."""
        batch = tf.shape(value_features)[0]
        set_facts = self._set_facts(type_features)
        # A value without a fact: no flag, no result yet (kind 0). A group's candidates hold values (its category's
        # first column) or none.
        plain = tf.one_hot(VALUE_FLAGS, VALUE_FLAGS + self.kind_count)
        group_values = self._of_values(tf.broadcast_to(plain, [tf.shape(self.group_set)[0], 1, tf.shape(plain)[0]]),
                                       self.group_category[:, :1] > 0)  # [G, 2 * VALUE_FLAGS + K]
        if "value_state" in self.removed:
            group_values = tf.zeros_like(group_values)
        groups = tf.concat([tf.broadcast_to(group_values[tf.newaxis], [batch, *group_values.shape]),
                            tf.gather(set_facts, self.group_set, axis=1),
                            tf.broadcast_to(self.group_category[tf.newaxis],
                                            [batch, tf.shape(self.group_category)[0], 3])], axis=-1)
        # The pairs: every candidate holding a value with some fact, once per example.
        found = tf.where(tf.reduce_any(tf.not_equal(value_features, plain), axis=2))  # [N, 2]: example, value
        holders = tf.RaggedTensor.from_row_splits(self.holder_ids, self.holder_splits, validate=False)
        held = tf.gather(holders, tf.cast(found[:, 1], tf.int32))
        rows = tf.repeat(tf.cast(found[:, 0], tf.int32), held.row_lengths())
        keys, _ = tf.unique(rows * self.candidate_count + held.flat_values)
        example, candidate = keys // self.candidate_count, keys % self.candidate_count
        places = tf.gather(self.cand_values, candidate)  # [M, P]
        padded_values = tf.pad(value_features, [[0, 0], [0, 1], [0, 0]])
        of_values = tf.gather_nd(padded_values, tf.stack([tf.broadcast_to(example[:, tf.newaxis], tf.shape(places)),
                                                          places], axis=-1))  # [M, P, VALUE_FLAGS + K]
        values = self._of_values(of_values, tf.gather(self.value_mask, candidate))
        if "value_state" in self.removed:
            values = tf.zeros_like(values)
        types = tf.gather_nd(set_facts, tf.stack([example, tf.gather(self.type_set_of, candidate)], axis=-1))
        active = tf.concat([values, types, tf.gather(self.category, candidate)], axis=-1)
        return {"candidate_groups": groups, "candidate_pairs": tf.stack([example, candidate], axis=-1),
                "candidate_active": active}

    def candidate_features(self, value_features: tf.Tensor, type_features: tf.Tensor) -> tf.Tensor:
        """[B, C, F]: each candidate's values' facts (every one and some one of them), its slot types', its
        category (values, a request, neither). The definition, every candidate written out; training and serving
        use :meth:`candidate_rows`."""
        batch = tf.shape(value_features)[0]
        padded_values = tf.pad(value_features, [[0, 0], [0, 1], [0, 0]])
        of_values = tf.gather(padded_values, self.cand_values, axis=1)  # [B, C, P, VALUE_FLAGS + K]
        candidate_values = self._of_values(of_values, tf.broadcast_to(self.value_mask[tf.newaxis],
                                                                      tf.shape(of_values)[:-1]))
        candidate_types = tf.gather(self._set_facts(type_features), self.type_set_of, axis=1)
        if "value_state" in self.removed:
            candidate_values = tf.zeros_like(candidate_values)
        category = tf.broadcast_to(self.category[tf.newaxis], [batch, tf.shape(self.category)[0], 3])
        return tf.concat([candidate_values, candidate_types, category], axis=-1)

    def __call__(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        """The scorer's inputs from raw dialogs: the facts, and the candidates' features in place of the values' and
        slot types' facts."""
        return scorer_inputs(self, self.facts(memory, memory_speaker, query))


def scorer_inputs(features: StateFeatures, facts: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """The scorer's inputs from an example's facts (:meth:`StateFeatures.facts`, computed now or cached)."""
    inputs = {key: tf.cast(value, tf.float32) if key in ("last_line", "state_counts") else value
              for key, value in facts.items() if key not in ("value_features", "type_features")}
    type_features = tf.cast(facts["type_features"], tf.float32)
    # Every slot type's facts, for the template and act terms: which types are pending, and their latest results.
    inputs["dialog_state"] = tf.reshape(type_features, [-1, features.type_count * (features.kind_count + TYPE_FLAGS)])
    if "dialog_state" in features.removed:
        inputs["dialog_state"] = tf.zeros_like(inputs["dialog_state"])
    inputs.update(features.candidate_rows(tf.cast(facts["value_features"], tf.float32), type_features))
    return inputs


def learn_act_mask(features: StateFeatures, facts: dict[str, np.ndarray], answers: np.ndarray) -> np.ndarray:
    """[situations, acts * VALUE_PATTERNS] bool: what training's bots did in each situation
    (:meth:`StateFeatures.situation`), an act with values of a kind (:meth:`StateFeatures.uses`); anything in a
    situation training never showed, and everywhere when ``act_mask`` is removed. Learned as Hybrid Code Networks'
    action mask is written by hand: training never asks for a slot while a value the user gave beside the last
    check waits to be checked, never checks again the value just checked and never names a value the dialog did
    not, and no learned weight can rank these where training never showed the case (no training turn holds a value
    waiting beside a check and a slot missing; a call shape new to the test scores low: new API, audit more,
    docs/banking.md)."""
    allowed = np.ones((features.situations, len(features.acts) * VALUE_PATTERNS), bool)
    if "act_mask" in features.removed or not len(answers):
        return allowed
    kept = {key: tf.constant(facts[key]) for key in ("value_features", "last_line")}
    situation = features.situation(kept).numpy()
    uses = features.uses(kept, tf.constant(answers[:, np.newaxis], tf.int32)).numpy()[:, 0]
    seen = np.zeros_like(allowed)
    seen[situation, uses] = True
    shown = seen.any(axis=1)
    allowed[shown] = seen[shown]
    return allowed


def allowed_at(features: StateFeatures, allowed: tf.Tensor, facts: dict[str, tf.Tensor]) -> tf.Tensor:
    """[B, C] bool: which candidates the mask (:func:`learn_act_mask`) allows in each example's situation, by their
    use (:meth:`StateFeatures.uses`). It reads the facts alone, not the weights: training computes it once per
    development example, not once per epoch."""
    batch = tf.shape(facts["last_line"])[0]
    every = tf.broadcast_to(tf.range(features.candidate_count)[tf.newaxis], [batch, features.candidate_count])
    return tf.gather(tf.gather(allowed, features.situation(facts)), features.uses(facts, every), batch_dims=1)


def lowered(allow: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    """``logits`` [B, C] with every candidate ``allow`` [B, C] does not allow put after the allowed ones, lowered by
    the row's spread of scores plus one (so their order among themselves is kept, whatever the scores' size)."""
    spread = tf.reduce_max(logits, axis=1, keepdims=True) - tf.reduce_min(logits, axis=1, keepdims=True) + 1.0
    return tf.where(allow, logits, logits - spread)


def masked(features: StateFeatures, allowed: tf.Tensor, facts: dict[str, tf.Tensor], logits: tf.Tensor) -> tf.Tensor:
    """``logits`` [B, C] with every candidate the mask does not allow in the example's situation
    (:func:`allowed_at`) put after the allowed ones (:func:`lowered`)."""
    return lowered(allowed_at(features, allowed, facts), logits)


def candidate_matrix(features: StateFeatures, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
    """[B, C, F]: the compact candidate rows of ``inputs`` written out for every candidate (each group's row, then
    the rows of the candidates with a fact), which :meth:`StateFeatures.candidate_features` defines."""
    rows = tf.gather(inputs["candidate_groups"], features.group_of, axis=1)
    return tf.tensor_scatter_nd_update(rows, inputs["candidate_pairs"], inputs["candidate_active"])


class StateScorer(keras.Model):
    """The three terms: template and act (the dialog against each template, and against each act) and filling
    (each candidate's features)."""

    def __init__(self, words: int, templates: int, template_of: Sequence[int], config: StateConfig,
                 acts: int = 0, act_of: Sequence[int] = (), template_acts: Sequence[int] = (),
                 group_of: Sequence[int] = (), vectors: np.ndarray | None = None) -> None:
        super().__init__()
        init = keras.initializers.RandomNormal(stddev=0.1, seed=config.seed)
        self.words = keras.layers.Embedding(words, config.dim, embeddings_initializer=init)
        self.history = keras.layers.Embedding(words, config.dim, embeddings_initializer=init)
        self.hidden = keras.layers.Dense(config.dim, activation="relu", kernel_initializer=init)
        self.template_layer = keras.layers.Dense(templates, kernel_initializer=init)
        self.use_acts = "act_term" not in config.removed and acts > 0
        if self.use_acts:
            self.act_hidden = keras.layers.Dense(config.dim, activation="relu", kernel_initializer=init)
            self.act_layer = keras.layers.Dense(acts, kernel_initializer=init)
            self.act_of = tf.constant(list(act_of), tf.int32)
            self.template_acts, self.acts = tf.constant(list(template_acts), tf.int32), acts
        self.filler_hidden = keras.layers.Dense(config.filler_units, activation="relu", kernel_initializer=init)
        self.filler_out = keras.layers.Dense(1, kernel_initializer=init)
        self.template_of = tf.constant(list(template_of), tf.int32)
        self.group_of = tf.constant(list(group_of), tf.int32)  # each candidate's group (StateFeatures.candidate_rows)
        self.word_dropout, self.history_dropout, self.seed = config.word_dropout, config.history_dropout, config.seed
        # The pretrained vectors (StateFeatures.vectors), fixed: row 0 for a word they do not hold.
        self.vectors = tf.constant(vectors if vectors is not None else np.zeros((1, VECTOR_DIM), np.float32))

    def _bag(self, rows: tf.Tensor, ids: tf.Tensor, training: bool, rate: float, seed: int) -> tf.Tensor:
        """The sum of ``rows`` [B, W, d] over the words of ``ids`` [B, W] (0: none), each left out in training at
        ``rate``."""
        keep = tf.cast(ids > 0, tf.float32)
        if training and rate:  # each word left out at this rate: no flow rests on one wording
            keep *= tf.cast(tf.random.uniform(tf.shape(ids), seed=seed) >= rate, tf.float32)
        return tf.reduce_sum(rows * keep[..., tf.newaxis], axis=1)

    def call(self, inputs: dict[str, tf.Tensor], training: bool = False) -> tf.Tensor:
        query_ids, vector_ids = inputs["query_words"], inputs["vector_words"]
        query = self._bag(self.words(query_ids), query_ids, training, self.word_dropout, self.seed)
        vectors = self._bag(tf.gather(self.vectors, vector_ids), vector_ids, training, self.word_dropout,
                            self.seed + 1)
        history_ids = inputs["history_words"]
        history = self._bag(self.history(history_ids), history_ids, training, self.history_dropout, self.seed)
        sentence = inputs["sentence"]
        if training and self.word_dropout:  # the whole vector left out at the words' rate, as a wording may be
            keep = tf.random.uniform(tf.shape(sentence)[:1], seed=self.seed + 2) >= self.word_dropout
            sentence = sentence * tf.cast(keep, sentence.dtype)[:, tf.newaxis]
        # No previous template: read from the state, the flow of a dialog generalises to orders training never
        # showed (the module's docstring).
        dialog = tf.concat([query, vectors, history, inputs["last_line"], inputs["state_counts"],
                            inputs["dialog_state"]], axis=-1)
        templates = self.template_layer(self.hidden(dialog))  # [B, templates]
        if not self.use_acts:
            return tf.gather(templates, self.template_of, axis=1) + self._filling(inputs)
        # With acts, the template term only orders the templates of one act (a log-softmax within each act): which
        # act comes next is the act term's, from the dialog and every slot type's facts, as its acts name no slot.
        within = within_acts(templates, self.template_acts, self.acts)
        # The turn's meaning decides the act alone (stop, ask again, end the call); read by the template term as well,
        # it tied the order of the slots asked for to training's wordings (dev-OOP's reordering, docs/banking.md).
        acts = self.act_layer(self.act_hidden(tf.concat([dialog, sentence], axis=-1)))
        score = tf.gather(within, self.template_of, axis=1) + tf.gather(acts, self.act_of, axis=1)
        return score + self._filling(inputs)

    def _filling(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        """[B, C]: the filling term of every candidate, computed on the compact rows (each group's, then those of
        the candidates with a fact) and spread to the candidates: the same scores as the network over every
        candidate's row, at the cost of the rows that differ alone."""
        def fill(rows: tf.Tensor) -> tf.Tensor:
            return self.filler_out(self.filler_hidden(rows))[..., 0]

        scores = tf.gather(fill(inputs["candidate_groups"]), self.group_of, axis=1)
        return tf.tensor_scatter_nd_update(scores, inputs["candidate_pairs"], fill(inputs["candidate_active"]))


class StateServingModule(DialogServingModule):
    """The state ranker with :class:`DialogServingModule`'s signatures; ``attention`` is all zero (no memory
    attention: the state is tracked, not attended to)."""

    def __init__(self, features: StateFeatures, scorer: StateScorer, candidates: Sequence[str], spec_json: str,
                 allowed: np.ndarray, top_k: int = 10) -> None:
        tf.Module.__init__(self)
        self.features = features
        self.allowed = tf.constant(allowed)  # learn_act_mask's table
        hold_models(self, model=scorer)
        self.candidates = tf.constant(list(candidates))
        self.top_k = min(top_k, len(candidates))
        self._spec_json = spec_json

    def rank(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        facts = self.features.facts(memory, memory_speaker, query)
        logits = masked(self.features, self.allowed, facts, self.model(scorer_inputs(self.features, facts)))
        top = tf.math.top_k(logits, k=self.top_k)
        attention = tf.zeros([tf.shape(memory)[0], 1, tf.shape(memory)[1]])
        return {"responses": tf.gather(self.candidates, top.indices), "scores": top.values, "indices": top.indices,
                "attention": attention}


FACT_DTYPES = {"query_words": np.int32, "vector_words": np.int32, "history_words": np.int32, "sentence": np.float32,
               "last_line": np.uint8,
               "state_counts": np.uint8, "value_features": np.uint8, "type_features": np.uint8}


def traced_facts(features: StateFeatures) -> Callable[..., dict[str, tf.Tensor]]:
    """:meth:`StateFeatures.facts` as one graph for any batch: traced once, for every split a fit reads."""
    return tf.function(features.facts, autograph=False, input_signature=[tf.TensorSpec([None, None], tf.string),
                                                                       tf.TensorSpec([None, None], tf.string),
                                                                       tf.TensorSpec([None], tf.string)])


def cached_facts(features: StateFeatures, examples: Sequence[TurnExample], size: int = 256,
                 compute: Callable[..., dict[str, tf.Tensor]] | None = None) -> dict[str, np.ndarray]:
    """Every example's facts, computed once (the raw dialogs parsed in batches of ``size``, by ``compute``, a
    :func:`traced_facts` of ``features``, made here when not given), as arrays of one row per example: the word ids
    packed to the front of their row (the bags ignore order and padding), the flags as bytes (they are 0 or 1). The
    steps then gather the candidates' features from these, and parse nothing. The batches are
    :func:`~models.examples.batches_by_memory_length`'s, and each row is put back in its example's place."""
    compute = compute or traced_facts(features)
    indices: list[np.ndarray] = []
    parts: dict[str, list[np.ndarray]] = {key: [] for key in FACT_DTYPES}
    for chosen, memory, speaker, query in batches_by_memory_length(examples, size):
        facts = compute(tf.constant(memory, tf.string), tf.constant(speaker, tf.string),
                        tf.constant(query, tf.string))
        for key, value in facts.items():
            parts[key].append(value.numpy())
        indices.append(chosen)
    order = np.concatenate(indices) if indices else np.zeros(0, np.int64)
    out = {}
    for key, dtype in FACT_DTYPES.items():
        if key.endswith("_words"):  # ids packed to the front, padded to the widest row
            rows = [row[row > 0] for part in parts[key] for row in part]
            width = max((len(row) for row in rows), default=0) or 1
            packed = np.zeros((len(rows), width), dtype)
            for i, row in zip(order, rows, strict=True):
                packed[i, :len(row)] = row
            out[key] = packed
        elif parts[key]:
            rows = np.concatenate(parts[key]).astype(dtype)
            out[key] = np.empty_like(rows)
            out[key][order] = rows
        else:
            out[key] = np.zeros((0,), dtype)
    return out


def _fact_batches(facts: dict[str, np.ndarray], answers: np.ndarray, size: int, rng: np.random.Generator
                  ) -> Iterator[tuple[dict[str, tf.Tensor], tf.Tensor]]:
    """The batches of a training epoch (shuffled with ``rng``), each made when it is needed: an epoch's copy of the
    facts is never held whole."""
    order = rng.permutation(len(answers))
    for start in range(0, len(answers), size):
        chosen = order[start:start + size]
        yield {key: tf.constant(value[chosen]) for key, value in facts.items()}, tf.constant(answers[chosen], tf.int32)


def development_batches(facts: dict[str, np.ndarray], answers: np.ndarray,
                        allow_of: Callable[[dict[str, tf.Tensor]], tf.Tensor], size: int = EVAL_BATCH
                        ) -> list[tuple[dict[str, tf.Tensor], tf.Tensor, tf.Tensor, tf.Tensor]]:
    """A development split's batches, scored after every epoch: each distinct row of facts and answer once (a
    generated corpus repeats a state and its answer in many dialogs), with how many examples it stands for, and the
    mask ``allow_of`` gives it (it reads no weight, so it is computed here, once). Counted, they give the accuracy
    over every example."""
    rows: dict[bytes, int] = {}  # a distinct row -> its first example
    counts: dict[bytes, int] = {}
    for row in range(len(answers)):
        key = b"".join(facts[name][row].tobytes() for name in FACT_DTYPES) + answers[row].tobytes()
        rows.setdefault(key, row)
        counts[key] = counts.get(key, 0) + 1
    chosen = np.array(list(rows.values()), np.int64)
    weights = np.array(list(counts.values()), np.int32)
    batches = []
    for start in range(0, len(chosen), size):
        part = chosen[start:start + size]
        batch = {key: tf.constant(value[part]) for key, value in facts.items()}
        batches.append((batch, tf.constant(answers[part], tf.int32), tf.constant(weights[start:start + size]),
                        allow_of(batch)))
    return batches


def answered_right(features: StateFeatures, scorer: StateScorer, facts: dict[str, tf.Tensor], answer: tf.Tensor,
                   count: tf.Tensor, allow: tf.Tensor) -> tf.Tensor:
    """How many development examples a batch of :func:`development_batches` answers right: each row's count when
    its first-ranked candidate, the act mask applied, is its answer."""
    logits = lowered(allow, scorer(scorer_inputs(features, facts)))
    right = tf.equal(tf.argmax(logits, axis=1, output_type=tf.int32), answer)
    return tf.reduce_sum(tf.where(right, count, 0))


def training_step(features: StateFeatures, scorer: StateScorer, optimizer: keras.optimizers.Optimizer
                  ) -> Callable[[dict[str, tf.Tensor], tf.Tensor], tf.Tensor]:
    """One step on a batch of cached facts and its answers (the mean cross-entropy over every candidate, then the
    optimizer's update); the loss. Training and the speed benchmark compile it each their own way."""
    def step(facts: dict[str, tf.Tensor], answer: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            logits = scorer(scorer_inputs(features, facts), training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(answer, logits))
        grads = tape.gradient(loss, scorer.trainable_variables)
        optimizer.apply_gradients(zip(grads, scorer.trainable_variables, strict=True))
        return loss

    return step


def build_state_ranker(trn: Sequence[TurnExample], candidates: Sequence[str], config: StateConfig
                       ) -> tuple[SlotLexicon, list[str], StateFeatures, StateScorer]:
    """The lexicon and the words learned from ``trn``, the featuriser and the (untrained) scorer over them: what
    training fits and what a benchmark of the scorer's cost builds."""
    lexicon = SlotLexicon.learn(trn)
    words = sorted({w for e in trn for w in lexicon.template(e.query).split(" ")})
    features = StateFeatures(lexicon, candidates, words, config.removed)
    scorer = StateScorer(len(words) + 1, len(features.templates), features.template_of.numpy().tolist(), config,
                         len(features.acts), features.act_of.numpy().tolist(), features.template_acts,
                         features.group_of.numpy().tolist(), features.vectors)
    return lexicon, words, features, scorer


def train_state_ranker(task: TaskData, out: str | Path, config: StateConfig, top_k: int = 10,
                       progress: bool = False) -> dict:
    """Learn the lexicon and the scorer on ``trn``, export the SavedModel to ``out``; the training summary. The best
    epoch is the one best on ``dev`` or, when the task holds the development challenge sets (``dev-OOP``), on the
    mean of ``dev``'s and theirs: a flow training never showed is what the model is for, and a choice made on
    in-pattern turns alone picked early epochs that generalised less (docs/banking.md)."""
    prepare_output(out)
    started = time.perf_counter()
    keras.utils.set_random_seed(config.seed)
    trn, dev = task.split("trn"), task.split("dev")
    candidates = list(task.candidates)
    lexicon, words, features, scorer = build_state_ranker(trn, candidates, config)
    index = {c: i for i, c in enumerate(candidates)}
    trn_answers = np.array([index[e.answer] for e in trn])
    dev_answers = np.array([index[e.answer] for e in dev])
    compute = traced_facts(features)
    trn_facts, dev_facts = cached_facts(features, trn, compute=compute), cached_facts(features, dev, compute=compute)
    allowed = learn_act_mask(features, trn_facts, trn_answers)
    allowed_tensor = tf.constant(allowed)
    challenges = task.examples.get(DEV_CHALLENGES, [])
    challenge_answers = np.array([index[e.answer] for e in challenges])
    optimizer = keras.optimizers.Adam(config.learning_rate, clipnorm=40.0)
    # One signature for training and scoring: word ids are as wide as a split's widest row, others fixed.
    signature = [{key: tf.TensorSpec([None, None] if key.endswith("_words") else [None, *value.shape[1:]],
                                     tf.as_dtype(value.dtype)) for key, value in trn_facts.items()},
                 tf.TensorSpec([None], tf.int32)]

    step = tf.function(training_step(features, scorer, optimizer), autograph=False, input_signature=signature)

    @tf.function(autograph=False, input_signature=signature[:1])
    def allow_of(facts: dict[str, tf.Tensor]) -> tf.Tensor:
        return allowed_at(features, allowed_tensor, facts)

    correct = tf.function(partial(answered_right, features, scorer), autograph=False,
                          input_signature=[*signature, tf.TensorSpec([None], tf.int32),
                                           tf.TensorSpec([None, None], tf.bool)])

    rng = np.random.default_rng(config.seed)
    dev_batches = development_batches(dev_facts, dev_answers, allow_of)
    challenge_batches = development_batches(cached_facts(features, challenges, compute=compute), challenge_answers,
                                            allow_of)
    best, best_epoch, best_weights, history = -1.0, 0, None, []
    for epoch in range(1, config.epochs + 1):
        losses = [float(step(*batch)) for batch in _fact_batches(trn_facts, trn_answers, config.batch_size, rng)]
        if not np.isfinite(losses[-1]):
            raise ValueError(f"state ranker: the loss became {losses[-1]} in epoch {epoch}")
        accuracy = round(100.0 * sum(int(correct(*b)) for b in dev_batches) / max(len(dev), 1), 2)
        history.append({"epoch": epoch, "loss": round(float(np.mean(losses)), 4), "dev": accuracy})
        chosen_on = accuracy
        if challenges:
            history[-1][DEV_CHALLENGES] = round(100.0 * sum(int(correct(*b)) for b in challenge_batches) /
                                                len(challenges), 2)
            chosen_on = (accuracy + history[-1][DEV_CHALLENGES]) / 2
        if progress:
            print(f"state ranker epoch {epoch}: {history[-1]}", flush=True)
        if chosen_on > best:
            best, best_epoch, best_weights = chosen_on, epoch, scorer.get_weights()
        elif epoch - best_epoch >= config.patience:
            break
    scorer.set_weights(best_weights)
    spec = json.dumps({"model": "state_ranker", "lexicon": json.loads(lexicon.to_json()), "words": words,
                       "removed": list(config.removed)})
    export(StateServingModule(features, scorer, candidates, spec, allowed, top_k), out)
    chosen = history[best_epoch - 1]
    return {"best_epoch": best_epoch, "epochs_run": len(history), "dev_per_response_accuracy": chosen["dev"],
            "chosen_on": "dev" if not challenges else f"dev and {DEV_CHALLENGES}",
            **({f"{DEV_CHALLENGES}_per_response_accuracy": chosen[DEV_CHALLENGES]} if challenges else {}),
            "history": history, "templates": len(features.templates), "slot_types": list(lexicon.slot_types),
            "masked_situations": int((~allowed).any(axis=1).sum()),
            "train_seconds": round(time.perf_counter() - started, 1),
            "config": {"epochs": config.epochs, "patience": config.patience, "learning_rate": config.learning_rate,
                       "batch_size": config.batch_size, "dim": config.dim, "word_dropout": config.word_dropout,
                       "history_dropout": config.history_dropout, "seed": config.seed,
                       "removed": list(config.removed)}}
