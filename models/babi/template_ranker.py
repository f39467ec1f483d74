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

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import keras
import numpy as np

from data.atomic import write_text_atomic
from data.corpus import NO_RESULT, is_api_call, parse_kb_result
from models.examples import BOT, USER, Ranker, TaskData, TurnExample, best_answers
from models.features import spec_from_sentences
from models.serving.ranker import SavedModelRanker
from models.training import TrainConfig, fit_and_export, memory_size_for

NAME = "name"
SKIPPED_ATTRIBUTES = {"rating"}  # numbers that rank restaurants; kept as words
FILL_FEATURES = ("in_query", "user_recency", "user_ever", "bot_recency", "bot_ever", "in_api_call", "in_results",
                 "rating_rank", "best_not_offered", "on_offer", "attribute_of_on_offer", "known", "own_attribute")
# The features that encode the restaurant policy by design (offer by rating, best first, answer about the
# restaurant on offer): named, and ablated in Table 2 (``template_memn2n-no_*``).
POLICY_FEATURES = ("rating_rank", "best_not_offered", "attribute_of_on_offer")
# How deep into a learned ranker's ranking :class:`RankedFilling` looks for the template's candidates.
LEARNED_FILL_DEPTH = 200
# Examples whose filling features are held at once when ranking (each is [largest group, features]).
RANK_CHUNK = 1024


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
        calls = [a.split()[1:] for a in answers if is_api_call(a) and a != NO_RESULT]
        by_position: dict[int, Counter] = defaultdict(Counter)
        for arguments in calls:
            for position, word in enumerate(arguments):
                if word in types:
                    by_position[position][types[word]] += 1
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


def _is_result_line(speaker: str, text: str) -> bool:
    return speaker == USER and (text == NO_RESULT or parse_kb_result(text) is not None)


def template_example(lexicon: EntityLexicon, example: TurnExample) -> TurnExample:
    """The example as the template model sees it: delexicalised, KB results reduced to their rating lines."""
    memory, speakers = [], []
    for text, speaker in zip(example.memory, example.memory_speaker, strict=True):
        if _is_result_line(speaker, text) and text != NO_RESULT:
            fact = parse_kb_result(text)
            if fact is None or fact[1] != "R_rating":
                continue
        memory.append(lexicon.delexicalise(text))
        speakers.append(speaker)
    return replace(example, memory=tuple(memory), memory_speaker=tuple(speakers),
                   query=lexicon.delexicalise(example.query), answer=lexicon.delexicalise(example.answer))


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
            if _is_result_line(speaker, text):
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


class CandidateGroup:
    """The candidates of one template as arrays, so that filling features are computed per entity value the
    dialog touches rather than per candidate: a group such as "here it is <phone>" has a candidate per restaurant,
    and a task-5 history names a handful of them.

    :meth:`features` gives :func:`candidate_features` of every candidate (tested equal)."""

    def __init__(self, lexicon: EntityLexicon, candidates: Sequence[str]) -> None:
        self.lexicon = lexicon
        slots = [lexicon.slots(c) for c in candidates]
        self.values = sorted({slot for row in slots for slot in row})  # distinct (kind, value)
        index = {slot: j for j, slot in enumerate(self.values)}
        self.positions: dict[str, list[int]] = defaultdict(list)  # value -> its rows in ``values``
        for j, (_, value) in enumerate(self.values):
            self.positions[value].append(j)
        width = max((len(row) for row in slots), default=0) or 1
        self.slot_index = np.full((len(candidates), width), len(self.values), np.int64)  # padding: a zero row
        for g, row in enumerate(slots):
            self.slot_index[g, :len(row)] = [index[slot] for slot in row]
        self.known = np.array([float(value in lexicon.types) for _, value in self.values], np.float32)
        self.slots = slots
        self.own_names = [next((value for kind, value in row if kind == NAME), None) for row in slots]
        self.by_own_name: dict[str, list[int]] = defaultdict(list)
        for g, name in enumerate(self.own_names):
            if name is not None:
                self.by_own_name[name].append(g)
        # own_attribute from the KB file alone; a dialog's KB results may restate it (see features()).
        self.own_attribute = np.array([self._own_attribute(DialogContext(), g) for g in range(len(slots))],
                                      np.float32)

    def _own_attribute(self, context: DialogContext, g: int) -> float:
        name = self.own_names[g]
        return float(sum(kind != NAME and value == context.attribute(self.lexicon, name, kind)
                         for kind, value in self.slots[g]))

    def features(self, context: DialogContext) -> np.ndarray:
        """[G, F]: each candidate's summed value features in ``context``."""
        table = np.zeros((len(self.values) + 1, len(FILL_FEATURES)), np.float32)
        table[:-1, FILL_FEATURES.index("known")] = self.known
        touched = {*context.user_turn, *context.bot_turn, *context.api_call, *context.result_words, *context.results}
        for value in touched & self.positions.keys():  # a value the dialog never touched has no context feature
            for j in self.positions[value]:
                table[j] = value_features(self.lexicon, context, self.values[j][0], value, None)
        if context.on_offer is not None:  # the attributes of the restaurant on offer, said or not
            column = FILL_FEATURES.index("attribute_of_on_offer")
            for kind in {kind for kind, _ in self.values if kind != NAME}:
                value = context.attribute(self.lexicon, context.on_offer, kind)
                for j in self.positions.get(value, ()):
                    if self.values[j][0] == kind:
                        table[j, column] = 1.0
        summed = np.zeros((len(self.slot_index), len(FILL_FEATURES)), np.float32)
        for position in range(self.slot_index.shape[1]):  # slot by slot, as candidate_features adds them
            summed += table[self.slot_index[:, position]]
        own = FILL_FEATURES.index("own_attribute")  # per candidate, not per value: the table leaves it 0
        summed[:, own] = self.own_attribute
        for name in context.facts.keys() & self.by_own_name.keys():  # facts the dialog's KB results state
            for g in self.by_own_name[name]:
                summed[g, own] = self._own_attribute(context, g)
        return summed


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
    lexicon: EntityLexicon
    templates: dict[str, list[str]]  # template -> its candidates
    template_model: SavedModelRanker
    filler: keras.Model | None
    features: tuple[str, ...] = FILL_FEATURES  # the filling features the filler reads (fewer: an ablation)
    # Each template's CandidateGroup, built on first use (ablations made by with_filler share it).
    tables: dict[str, CandidateGroup] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def fit(cls, task: TaskData, config: TrainConfig, out: str | Path, fill_epochs: int = 10,
            verbose: int = 0, features: Sequence[str] = FILL_FEATURES) -> tuple[TemplateRanker, dict]:
        """Fit on the task's ``trn``, the template model's best epoch on ``dev``; models written under ``out``."""
        trn, dev = task.split("trn"), task.split("dev")
        lexicon = EntityLexicon.learn(task.facts, [e.answer for e in trn])
        templates: dict[str, list[str]] = defaultdict(list)
        for candidate in task.candidates:
            templates[lexicon.delexicalise(candidate)].append(candidate)
        out = Path(out)
        trn_t = [template_example(lexicon, e) for e in trn]
        dev_t = [template_example(lexicon, e) for e in dev]
        sentences = {s for e in trn_t for s in (*e.memory, e.query, e.answer)}
        spec = spec_from_sentences(list(templates), [], sentences, memory_size_for(config, trn_t + dev_t))
        summary = fit_and_export(spec, trn_t, dev_t, config, out / "templates", verbose)
        write_text_atomic(out / "lexicon.json", json.dumps({"types": lexicon.types, "attributes": lexicon.attributes}))
        ranker = cls(lexicon, dict(templates), SavedModelRanker(out / "templates"), None, ())
        ranker, fill_summary = ranker.with_filler(trn, features, fill_epochs, config.seed, verbose)
        ranker.filler.save(out / "filler.keras")
        return ranker, {"templates": len(templates), "template_model": summary, "filler": fill_summary}

    def with_filler(self, trn: Sequence[TurnExample], features: Sequence[str] = FILL_FEATURES, epochs: int = 10,
                    seed: int = 0, verbose: int = 0) -> tuple[TemplateRanker, dict]:
        """The same lexicon and template model with a filler trained on ``features`` only (the ablations)."""
        unknown = sorted(set(features) - set(FILL_FEATURES))
        if unknown or not features:
            raise ValueError(f"filling features must be some of {list(FILL_FEATURES)}, got {list(features)}")
        features = tuple(f for f in FILL_FEATURES if f in features)
        filler, summary = self._fit_filler(self.lexicon, self.templates, trn, features, epochs, seed, verbose,
                                           self.tables)
        return replace(self, filler=filler, features=features), {**summary, "features": list(features)}

    @staticmethod
    def _groups(lexicon: EntityLexicon, templates: dict[str, list[str]], examples: Sequence[TurnExample],
                chosen: Sequence[str], features: Sequence[str] = FILL_FEATURES,
                tables: dict[str, CandidateGroup] | None = None) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
        """Features [N, G, F] (``features`` of them) and mask [N, G] of the candidates of each example's chosen
        template. ``tables`` caches each template's :class:`CandidateGroup` across calls."""
        tables = {} if tables is None else tables
        groups = [templates.get(t, []) for t in chosen]
        width = max((len(g) for g in groups), default=1) or 1
        columns = [FILL_FEATURES.index(f) for f in features]
        x = np.zeros((len(examples), width, len(columns)), np.float32)
        mask = np.zeros((len(examples), width), np.float32)
        for i, (example, template, group) in enumerate(zip(examples, chosen, groups, strict=True)):
            mask[i, :len(group)] = 1.0
            if len(group) < 2:
                continue
            if template not in tables:
                tables[template] = CandidateGroup(lexicon, group)
            x[i, :len(group)] = tables[template].features(DialogContext.of(lexicon, example))[:, columns]
        return x, mask, groups

    @classmethod
    def _fit_filler(cls, lexicon: EntityLexicon, templates: dict[str, list[str]], trn: Sequence[TurnExample],
                    features: Sequence[str], epochs: int, seed: int, verbose: int,
                    tables: dict[str, CandidateGroup] | None = None) -> tuple[keras.Model, dict]:
        gold = [lexicon.delexicalise(e.answer) for e in trn]
        chosen = [i for i, t in enumerate(gold) if len(templates.get(t, [])) > 1 and trn[i].answer in templates[t]]
        examples = [trn[i] for i in chosen]
        x, mask, groups = cls._groups(lexicon, templates, examples, [gold[i] for i in chosen], features, tables)
        y = np.array([group.index(e.answer) for e, group in zip(examples, groups, strict=True)], np.int32)
        keras.utils.set_random_seed(seed)
        filler = build_filler(len(features))
        filler.compile(optimizer=keras.optimizers.Adam(0.01),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        history = filler.fit({"features": x, "mask": mask}, y, batch_size=64, epochs=epochs, verbose=verbose)
        return filler, {"examples": len(y), "train_accuracy": round(100 * history.history["accuracy"][-1], 2)}

    def templates_of(self, examples: Sequence[TurnExample]) -> list[str]:
        """The template model's best template for each example."""
        return best_answers(self.template_model, [template_example(self.lexicon, e) for e in examples])

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The template model's best template; its candidates, best filled first (the template itself when no
        candidate has it).

        (Letting the top 2, 3 or 5 templates compete by log p(template) + log p(candidate | template) gave
        61.99, 61.94 and 62.03% on task 6 dev against 62.03% for the best template alone, so it is not done.)"""
        if not examples:
            return []
        chosen = self.templates_of(examples)
        ranked = []
        for start in range(0, len(examples), RANK_CHUNK):  # features of a chunk at a time: bounded memory
            part, templates = examples[start:start + RANK_CHUNK], chosen[start:start + RANK_CHUNK]
            x, mask, groups = self._groups(self.lexicon, self.templates, part, templates, self.features, self.tables)
            scores = self.filler.predict({"features": x, "mask": mask}, batch_size=256, verbose=0)
            ranked += [[group[int(i)] for i in np.argsort(-row[:len(group)], kind="stable")[:k]] if group
                       else [template] for row, group, template in zip(scores, groups, templates, strict=True)]
        return ranked


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
