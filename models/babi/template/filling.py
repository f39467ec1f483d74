"""The filler: which candidates of the chosen template, from generic features of their entity values.

The features of a candidate are the sum over its entity values of: said in the last user turn, by the user or the
bot and how recently, in the last API call, among the latest results and their rating rank, the best result not yet
offered, the restaurant on offer and its attributes, an attribute of the candidate's own restaurant. This module
defines them in Python (the readable reference); :mod:`models.babi.template.graph` computes the same in TensorFlow
ops inside the SavedModel, and a test holds the two equal.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import keras
import numpy as np
import tensorflow as tf

from data.corpus import is_api_call, parse_kb_result
from models.babi.dialog_state import is_result_line
from models.babi.template.graph import FillingFeatures
from models.babi.template.lexicon import NAME, EntityLexicon
from models.examples import BOT, USER, TurnExample, pad_batch

FILL_FEATURES = ("in_query", "user_recency", "user_ever", "bot_recency", "bot_ever", "in_api_call", "in_results",
                 "rating_rank", "best_not_offered", "on_offer", "attribute_of_on_offer", "known", "own_attribute")
# The features that encode the restaurant policy by design (offer by rating, best first, answer about the
# restaurant on offer): named, and ablated in Table 2 (``template_memn2n-no_*``).
POLICY_FEATURES = ("rating_rank", "best_not_offered", "attribute_of_on_offer")


@dataclass
class DialogContext:
    """What the filling features need to know about the dialog so far."""

    user_turn: dict[str, int] = field(default_factory=dict)  # word -> user turns ago (0: the query)
    bot_turn: dict[str, int] = field(default_factory=dict)  # word -> bot turns ago (0: the last bot turn)
    api_call: set[str] = field(default_factory=set)
    results: dict[str, int] = field(default_factory=dict)  # name -> rating, latest results block
    result_words: set[str] = field(default_factory=set)
    facts: dict[str, dict[str, str]] = field(default_factory=dict)
    on_offer: str | None = None
    ranked: list[str] = field(default_factory=list)  # latest results, best rated first
    best_not_offered: str | None = None

    @classmethod
    def of(cls, lexicon: EntityLexicon, example: TurnExample) -> DialogContext:
        context = cls(facts=defaultdict(dict))
        user_turns = bot_turns = 0
        block = "before"  # the latest block of KB results, read newest line first: before -> inside -> after
        lines = [*zip(example.memory, example.memory_speaker, strict=True), (example.query, USER)]
        for text, speaker in reversed(lines):  # newest first: the first sighting is the most recent
            if is_result_line(speaker, text):
                block = "inside" if block == "before" else block
                fact = parse_kb_result(text)
                if fact is not None:
                    name, attribute, value = fact
                    context.facts[name].setdefault(attribute.removeprefix("R_"), value)
                    if block == "inside":
                        context.result_words.update((name, value))
                        if attribute == "R_rating":
                            context.results.setdefault(name, int(value) if value.isdigit() else 0)
                continue
            block = "after" if block == "inside" else block
            words = text.split(" ")
            if speaker == BOT:
                if is_api_call(text) and not context.api_call:
                    context.api_call = set(words[1:])
                for word in words:
                    context.bot_turn.setdefault(word, bot_turns)
                    if context.on_offer is None and lexicon.types.get(word) == NAME:
                        context.on_offer = word
                bot_turns += 1
            else:
                for word in words:
                    context.user_turn.setdefault(word, user_turns)
                user_turns += 1
        context.ranked = sorted(context.results, key=lambda n: -context.results[n])
        context.best_not_offered = next((n for n in context.ranked if n not in context.bot_turn), None)
        return context

    def attribute(self, lexicon: EntityLexicon, name: str | None, kind: str) -> str | None:
        if name is None:
            return None
        return self.facts.get(name, {}).get(kind) or lexicon.attributes.get(name, {}).get(kind)


def value_features(lexicon: EntityLexicon, context: DialogContext, kind: str, value: str,
                   own_name: str | None) -> list[float]:
    user_ago, bot_ago = context.user_turn.get(value), context.bot_turn.get(value)
    return [
        float(context.user_turn.get(value) == 0),
        math.exp(-user_ago) if user_ago is not None else 0.0,
        float(user_ago is not None),
        math.exp(-bot_ago) if bot_ago is not None else 0.0,
        float(bot_ago is not None),
        float(value in context.api_call),
        float(value in context.result_words),
        1.0 / (1 + context.ranked.index(value)) if value in context.results else 0.0,
        float(value == context.best_not_offered),
        float(value == context.on_offer),
        float(kind != NAME and value == context.attribute(lexicon, context.on_offer, kind)),
        float(value in lexicon.types),
        float(kind != NAME and value == context.attribute(lexicon, own_name, kind)),
    ]


def candidate_features(lexicon: EntityLexicon, context: DialogContext, candidate: str) -> np.ndarray:
    """Sum of the features of the candidate's entity values (the candidates of one template share their types)."""
    slots = lexicon.slots(candidate)
    own_name = next((value for kind, value in slots if kind == NAME), None)
    total = np.zeros(len(FILL_FEATURES), np.float32)
    for kind, value in slots:
        total += np.asarray(value_features(lexicon, context, kind, value, own_name), np.float32)
    return total


def build_filler(features: int, hidden: int = 32) -> keras.Model:
    """Scores [B, G] for groups of G candidates with ``features`` each; padded candidates are masked out."""
    inputs = keras.Input((None, features), name="features")
    mask = keras.Input((None,), name="mask")
    hidden_layer = keras.layers.Dense(hidden, activation="relu")(inputs)
    scores = keras.layers.Reshape((-1,))(keras.layers.Dense(1)(hidden_layer))
    scores = keras.layers.Lambda(lambda t: t[0] + (t[1] - 1.0) * 1e9)([scores, mask])
    return keras.Model({"features": inputs, "mask": mask}, scores)


def candidate_features_of(filling: FillingFeatures, examples: Sequence[TurnExample], ids: np.ndarray,
                          batch_size: int = 256) -> np.ndarray:
    """[N, G, F] filling features of the candidates ``ids`` [N, G] of each example (``len(candidates)``: padding),
    from :meth:`FillingFeatures.every_candidate`, a batch at a time."""
    every = tf.function(filling.every_candidate, autograph=False, reduce_retracing=True)
    count = int(filling.own.shape[0]) - 1
    out = np.zeros((len(examples), ids.shape[1], len(filling.feature_names)), np.float32)
    for start in range(0, len(examples), batch_size):
        memory, speaker, query = pad_batch(examples[start:start + batch_size])
        inputs = (tf.constant(memory, tf.string), tf.constant(speaker, tf.string), tf.constant(query, tf.string))
        static, pairs, touched = (t.numpy() for t in every(*inputs))
        part = ids[start:start + batch_size]
        out[start:start + batch_size] = np.vstack([static, np.zeros_like(static[:1])])[part]
        column = np.full((len(part), count + 1), -1)  # where each candidate sits in the row
        column[np.arange(len(part))[:, np.newaxis], part] = np.arange(part.shape[1])[np.newaxis, :]
        column[:, count] = -1
        where = column[pairs[:, 0], pairs[:, 1]]
        wanted = where >= 0
        out[start + pairs[wanted, 0], where[wanted]] = touched[wanted]
    return out


class FillerBatches(keras.utils.PyDataset):
    """The filler's training batches: each turn's gold-template candidates, their features assembled per batch
    from each candidate's features without dialog and the few a dialog touches, so no [turns, largest group,
    features] array is ever held (task 5 has groups of a thousand restaurants)."""

    def __init__(self, static: np.ndarray, groups: list[np.ndarray], touched: list[tuple[np.ndarray, np.ndarray]],
                 answers: np.ndarray, batch_size: int = 64, seed: int = 0) -> None:
        super().__init__()
        self.static = np.vstack([static, np.zeros_like(static[:1])])  # the padding candidate: no feature
        self.groups, self.touched, self.answers, self.batch_size = groups, touched, answers, batch_size
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(len(answers))
        self.width = max((len(group) for group in groups), default=1)

    @classmethod
    def of(cls, filling: FillingFeatures, templates: dict[str, list[str]], candidates: Sequence[str],
           examples: Sequence[TurnExample], gold: Sequence[str], seed: int = 0, chunk: int = 256) -> FillerBatches:
        index = {c: i for i, c in enumerate(candidates)}
        slot = np.zeros(len(candidates), np.int64)  # each candidate's place in its template's group
        template_of = np.zeros(len(candidates), np.int64)
        names = list(templates)
        for t, template in enumerate(names):
            for g, candidate in enumerate(templates[template]):
                slot[index[candidate]], template_of[index[candidate]] = g, t
        groups = [np.array([index[c] for c in templates[t]], np.int32) for t in names]
        wanted = np.array([names.index(t) for t in gold], np.int64)
        every = tf.function(filling.every_candidate, autograph=False, reduce_retracing=True)
        static, touched = None, []
        for start in range(0, len(examples), chunk):
            memory, speaker, query = pad_batch(examples[start:start + chunk])
            inputs = (tf.constant(memory, tf.string), tf.constant(speaker, tf.string), tf.constant(query, tf.string))
            static, pairs, features = (t.numpy() for t in every(*inputs))
            # Each row's touched candidates of its gold template, in the order computed: one stable sort and a
            # split, not a mask over every pair per row, which cost a third of the filler's batch building.
            mine = template_of[pairs[:, 1]] == wanted[start + pairs[:, 0]]
            order = np.argsort(pairs[mine, 0], kind="stable")
            rows, ids, features = pairs[mine, 0][order], pairs[mine, 1][order], features[mine][order]
            bounds = np.searchsorted(rows, np.arange(len(examples[start:start + chunk]) + 1))
            touched += [(slot[ids[a:b]], features[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        answers = np.array([templates[t].index(e.answer) for e, t in zip(examples, gold, strict=True)], np.int32)
        if static is None:
            static = np.zeros((len(candidates), len(filling.feature_names)), np.float32)
        return cls(static, [groups[t] for t in wanted], touched, answers, seed=seed)

    def __len__(self) -> int:
        return math.ceil(len(self.answers) / self.batch_size)

    def __getitem__(self, index: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
        rows = self.order[index * self.batch_size:(index + 1) * self.batch_size]
        width = self.width  # every batch as wide as the largest group: Keras fixes the shape from the first one
        ids = np.full((len(rows), width), len(self.static) - 1, np.int32)
        for j, r in enumerate(rows):
            ids[j, :len(self.groups[r])] = self.groups[r]
        x = self.static[ids]
        for j, r in enumerate(rows):
            where, features = self.touched[r]
            x[j, where] = features
        mask = (ids < len(self.static) - 1).astype(np.float32)
        return {"features": x, "mask": mask}, self.answers[rows]

    def on_epoch_end(self) -> None:
        self.order = self.rng.permutation(len(self.answers))
