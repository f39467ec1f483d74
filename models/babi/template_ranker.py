"""Response selection in two learned steps: which kind of answer (its template), then which entities fill it.

MemN2N on task 6 (DSTC2) spends most of its mistakes on entities: it picks "The phone number of X is X_phone"
for the wrong X, or offers a restaurant that is not the best-rated result. This ranker separates the two
decisions, both learned from the training dialogs, with no rule written per response:

1. **Lexicon.** Entity words and their types come from the KB facts (KB file and the training dialogs' KB result
   lines) and from API-call arguments (a position takes the type most of its known values have).
2. **Template.** Every candidate is delexicalised (entity words become ``<type>``); a MemN2N (the project's own,
   same featurisation and training loop) ranks templates given the delexicalised history.
3. **Filling.** Among the candidates of the chosen template, a small network scores each candidate from generic
   features of its entity values in the dialog so far (said in the last user turn, by the user or the bot and
   how recently, in the last API call, among the latest results and their rating rank, the best result not yet
   offered, the restaurant on offer and its attributes, an attribute of the candidate's own restaurant). It is
   trained with softmax cross-entropy over the candidates of the gold template.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from data.corpus import NO_RESULT, is_api_call, parse_kb_result
from models.babi.dialog_state import (
    DialogStateTracker,
    StateSpec,
    api_arguments,
    argument_kinds,
    is_result_line,
)
from models.babi.template_graph import FillingFeatures, TemplateServingModule
from models.examples import BOT, USER, Ranker, TaskData, TurnExample, pad_batch
from models.features import FeatureSpec, spec_from_sentences
from models.metrics import percent
from models.serving.export import export, prepare_output
from models.training import TrainConfig, fit, memory_size_for

NAME = "name"
SKIPPED_ATTRIBUTES = {"rating"}  # numbers that rank restaurants; kept as words
FILL_FEATURES = ("in_query", "user_recency", "user_ever", "bot_recency", "bot_ever", "in_api_call", "in_results",
                 "rating_rank", "best_not_offered", "on_offer", "attribute_of_on_offer", "known", "own_attribute")
# The features that encode the restaurant policy by design (offer by rating, best first, answer about the
# restaurant on offer): named, and ablated in Table 2 (``template_memn2n-no_*``).
POLICY_FEATURES = ("rating_rank", "best_not_offered", "attribute_of_on_offer")
# How deep into a learned ranker's ranking :class:`RankedFilling` looks for the template's candidates.
LEARNED_FILL_DEPTH = 200


@dataclass
class EntityLexicon:
    """Entity word -> type, and each restaurant's attributes (type -> value), learned from training data."""

    types: dict[str, str]
    attributes: dict[str, dict[str, str]]

    @classmethod
    def learn(cls, facts: Iterable[tuple[str, str, str]], answers: Iterable[str]) -> EntityLexicon:
        types: dict[str, str] = {}
        attributes: dict[str, dict[str, str]] = defaultdict(dict)
        for entity, attribute, value in facts:
            kind = attribute.removeprefix("R_")
            if kind in SKIPPED_ATTRIBUTES or len(value.split()) != 1:
                continue
            types.setdefault(entity, NAME)
            types.setdefault(value, kind)
            attributes[entity][kind] = value
        # API-call arguments: each position takes the type most of its known values have; its other values too.
        calls = api_arguments(answers)
        by_position = argument_kinds(types, calls)
        for arguments in calls:
            for position, word in enumerate(arguments):
                if by_position[position] and not word.startswith("R_"):
                    types.setdefault(word, by_position[position].most_common(1)[0][0])
        return cls(types, dict(attributes))

    def delexicalise(self, text: str) -> str:
        return " ".join(f"<{self.types[w]}>" if w in self.types else w for w in text.split(" "))

    def slots(self, text: str) -> list[tuple[str, str]]:
        """The (type, value) of each entity word of ``text``, in order."""
        return [(self.types[w], w) for w in text.split(" ") if w in self.types]


def template_line(lexicon: EntityLexicon, text: str, speaker: str) -> str | None:
    """A memory line as the template model reads it: delexicalised; None for a KB result other than a rating
    line (left out)."""
    if is_result_line(speaker, text) and text != NO_RESULT:
        fact = parse_kb_result(text)
        if fact is None or fact[1] != "R_rating":
            return None
    return lexicon.delexicalise(text)


def template_example(lexicon: EntityLexicon, example: TurnExample, state: str = "",
                     lines: dict[tuple[str, str], str | None] | None = None) -> TurnExample:
    """The example as the template model sees it: delexicalised, KB results reduced to their rating lines, and
    the dialog ``state``'s words (:class:`DialogStateTracker`) before the query. ``lines`` caches
    :func:`template_line` across examples: every turn repeats its dialog's history, so most lines recur."""
    lines = {} if lines is None else lines
    memory, speakers = [], []
    for text, speaker in zip(example.memory, example.memory_speaker, strict=True):
        if (text, speaker) not in lines:
            lines[text, speaker] = template_line(lexicon, text, speaker)
        if lines[text, speaker] is not None:
            memory.append(lines[text, speaker])
            speakers.append(speaker)
    query = lexicon.delexicalise(example.query)
    return replace(example, memory=tuple(memory), memory_speaker=tuple(speakers),
                   query=f"{state} {query}" if state else query, answer=lexicon.delexicalise(example.answer))


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


@dataclass
class TemplateRanker:
    """The lexicon, the template model and the filler; ranked in TensorFlow ops by :attr:`module`, the module
    that ``fit`` exports as one SavedModel (so the benchmark, ``dialog evaluate`` and TF Serving rank alike)."""

    lexicon: EntityLexicon
    templates: dict[str, list[str]]  # template -> its candidates
    candidates: tuple[str, ...]
    template_spec: FeatureSpec
    template_model: keras.Model
    filler: keras.Model | None
    features: tuple[str, ...] = FILL_FEATURES  # the filling features the filler reads (fewer: an ablation)
    top_k: int = 10
    state: StateSpec | None = None  # the dialog state the template model reads (None: not tracked)
    call_bias: float | None = None  # with a state: log-odds added to the API-call action (None: no such action)

    @classmethod
    def fit(cls, task: TaskData, config: TrainConfig, out: str | Path | None = None, fill_epochs: int | None = None,
            verbose: int = 0, features: Sequence[str] = FILL_FEATURES, log_dir: str | None = None,
            evaluate_dev: bool = True) -> tuple[TemplateRanker, dict]:
        """Fit on the task's ``trn``, the template model's best epoch on ``dev``; the SavedModel written to ``out``."""
        return cls.fit_examples(task.candidates, task.facts, task.split("trn"), task.split("dev"), config, out,
                                fill_epochs, verbose, features, log_dir, evaluate_dev)

    @classmethod
    def fit_examples(cls, candidates: Sequence[str], facts: Sequence[tuple[str, str, str]],
                     trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TrainConfig,
                     out: str | Path | None = None, fill_epochs: int | None = None, verbose: int = 0,
                     features: Sequence[str] = FILL_FEATURES, log_dir: str | None = None,
                     evaluate_dev: bool = True) -> tuple[TemplateRanker, dict]:
        """The entry of ``dialog train --model template`` and the pipeline's TemplateTrainer (``fill_epochs``:
        the config's unless given; ``evaluate_dev``: rank dev with the finished model for the summary, which the
        pipeline leaves to its Evaluator)."""
        if not trn or not dev:
            raise ValueError(f"{len(trn)} training and {len(dev)} dev examples: both are needed")
        if out is not None:
            prepare_output(out)  # before any training: a refused --out costs nothing
        lexicon = EntityLexicon.learn(facts, [e.answer for e in trn])
        templates: dict[str, list[str]] = defaultdict(list)
        for candidate in candidates:
            templates[lexicon.delexicalise(candidate)].append(candidate)
        state = StateSpec.learn(lexicon.types, trn) if config.dialog_state else None
        state = state if state is not None and state.slots else None  # no API call, no slot to track
        trn_t, dev_t = template_examples(lexicon, state, trn), template_examples(lexicon, state, dev)
        sentences = {s for e in trn_t for s in (*e.memory, e.query, e.answer)}
        spec = spec_from_sentences(list(templates), [], sentences, memory_size_for(config, trn_t + dev_t))
        model, summary = fit(spec, trn_t, dev_t, replace(config, model="memn2n"), verbose, log_dir)
        ranker = cls(lexicon, dict(templates), tuple(candidates), spec, model, None, (), state=state,
                     call_bias=config.call_bias)
        ranker, fill_summary = ranker.with_filler(trn, features, fill_epochs or config.fill_epochs, config.seed,
                                                  verbose)
        if out is not None:
            export(ranker.module, out)
        result = {"templates": len(templates), "candidates": len(candidates), "template_model": summary,
                  "filler": fill_summary, "dialog_state": list(state.slots) if state is not None else None}
        if evaluate_dev:  # the complete responses, not only the templates
            started = time.perf_counter()
            predicted = [row[0] for row in ranker.rank(dev, 1)]
            accuracy = percent(p == e.answer for p, e in zip(predicted, dev, strict=True))
            result.update(dev_per_response_accuracy=round(accuracy, 2),
                          dev_seconds=round(time.perf_counter() - started, 1))
        return ranker, result

    @cached_property
    def module(self) -> TemplateServingModule:
        if self.filler is None:
            raise ValueError("the template ranker has no filler yet (see with_filler)")
        return TemplateServingModule(self.lexicon.types, self.lexicon.attributes, self.candidates, self.template_spec,
                                     self.template_model, self.filler, self.features, self.top_k, self.state,
                                     self.call_bias)

    def with_filler(self, trn: Sequence[TurnExample], features: Sequence[str] = FILL_FEATURES, epochs: int = 10,
                    seed: int = 0, verbose: int = 0) -> tuple[TemplateRanker, dict]:
        """The same lexicon and template model with a filler trained on ``features`` only (the ablations): softmax
        cross-entropy over the candidates of each training turn's gold template."""
        unknown = sorted(set(features) - set(FILL_FEATURES))
        if unknown or not features:
            raise ValueError(f"filling features must be some of {list(FILL_FEATURES)}, got {list(features)}")
        features = tuple(f for f in FILL_FEATURES if f in features)
        gold = [self.lexicon.delexicalise(e.answer) for e in trn]
        chosen = [i for i, t in enumerate(gold)
                  if len(self.templates.get(t, [])) > 1 and trn[i].answer in self.templates[t]]
        filling = FillingFeatures(self.lexicon.types, self.lexicon.attributes, self.candidates, features)
        batches = FillerBatches.of(filling, self.templates, self.candidates, [trn[i] for i in chosen],
                                   [gold[i] for i in chosen], seed=seed)
        keras.utils.set_random_seed(seed)
        filler = build_filler(len(features))
        filler.compile(optimizer=keras.optimizers.Adam(0.01),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        history = filler.fit(batches, epochs=epochs, verbose=verbose)
        summary = {"examples": len(batches.answers), "train_accuracy": round(100 * history.history["accuracy"][-1], 2),
                   "features": list(features)}
        return replace(self, filler=filler, features=features), summary

    def outputs(self, examples: Sequence[TurnExample], batch_size: int = 64) -> dict[str, np.ndarray]:
        """The module's ``responses``, ``indices`` and ``template`` of each example, a batch at a time."""
        outputs: dict[str, list[np.ndarray]] = defaultdict(list)
        for start in range(0, len(examples), batch_size):
            memory, speaker, query = pad_batch(examples[start:start + batch_size])
            result = self.module.serve_speakers(memory=tf.constant(memory, tf.string),
                                                memory_speaker=tf.constant(speaker, tf.string),
                                                query=tf.constant(query, tf.string))
            for key in ("responses", "indices", "template"):
                outputs[key].append(result[key].numpy())
        return {key: np.concatenate(value) for key, value in outputs.items()}

    def templates_of(self, examples: Sequence[TurnExample]) -> list[str]:
        """The template model's best template for each example."""
        if not examples:
            return []
        return [t.decode("utf-8") for t in self.outputs(examples)["template"]]

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The best template's candidates, best filled first, then the others (see :class:`TemplateServingModule`).

        (Letting the top 2, 3 or 5 templates compete by log p(template) + log p(candidate | template) gave
        61.99, 61.94 and 62.03% on task 6 dev against 62.03% for the best template alone, so it is not done.)"""
        if not examples:
            return []
        return [[r.decode("utf-8") for r in row[:k]] for row in self.outputs(examples)["responses"]]


def template_examples(lexicon: EntityLexicon, state: StateSpec | None, examples: Sequence[TurnExample]
                      ) -> list[TurnExample]:
    """The examples as the template model sees them (:func:`template_example`), the state words computed by the
    same ops as in the SavedModel."""
    words = DialogStateTracker(state).words(examples) if state is not None and examples else [""] * len(examples)
    lines: dict[tuple[str, str], str | None] = {}
    return [template_example(lexicon, e, w, lines) for e, w in zip(examples, words, strict=True)]


def candidate_features_of(filling: FillingFeatures, examples: Sequence[TurnExample], ids: np.ndarray,
                          batch_size: int = 256) -> np.ndarray:
    """[N, G, F] filling features of the candidates ``ids`` [N, G] of each example (``len(candidates)``: padding),
    from :meth:`FillingFeatures.every_candidate`, a batch at a time."""
    every = tf.function(filling.every_candidate, reduce_retracing=True)
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
        every = tf.function(filling.every_candidate, reduce_retracing=True)
        static, touched = None, []
        for start in range(0, len(examples), chunk):
            memory, speaker, query = pad_batch(examples[start:start + chunk])
            inputs = (tf.constant(memory, tf.string), tf.constant(speaker, tf.string), tf.constant(query, tf.string))
            static, pairs, features = (t.numpy() for t in every(*inputs))
            # Each row's touched candidates of its gold template, in the order computed: one stable sort and a
            # split, not a mask over every pair per row (6.6 of the 17 s of `make run`'s 12k filler turns).
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


@dataclass
class RankedFilling:
    """Filling with no hand-chosen feature: the template ranker's template, its candidates in the order another
    ranker (a MemN2N over every candidate) ranks them; the template itself when none of them is in that ranking."""

    template: TemplateRanker
    ranker: Ranker

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        if not examples:
            return []
        ranked = self.ranker.rank(examples, LEARNED_FILL_DEPTH)
        rows = []
        for template, row in zip(self.template.templates_of(examples), ranked, strict=True):
            group = set(self.template.templates.get(template, ()))
            rows.append([c for c in row if c in group][:k] or [template])
        return rows
