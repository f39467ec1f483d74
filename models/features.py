"""Featurisation: vocabulary, KB entity types, and the text-to-ids featuriser (appendix A and section 4.5).

The vocabulary and entity types are built once, in Python, from the training dialogs, the candidates and the KB
(so that OOV entities of the second KB have ids and types). Everything that turns dialog text into ids is the
TensorFlow module :class:`Featurizer`: training, evaluation and the exported SavedModel all run it, so there is
one featurisation, not a Python one and a serving one.

A memory sentence is the bag of its word ids plus a time word (``#t{k}``, k = how many memories ago, k < T=1000)
and a speaker word (``#user`` / ``#bot``); the query is the bag of its word ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np
import tensorflow as tf

from data.layout import TaskFiles
from models.examples import BOT, USER, TaskData

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1
SPEAKER_WORDS = {USER: "#user", BOT: "#bot"}
TIME_FEATURES = 1000
TYPE_PREFIX = "#type_"


def tokenize(text: str) -> list[str]:
    """Lower-cased whitespace tokens; the Featurizer's TF ops do the same (tested)."""
    return text.lower().split()


def time_word(k: int) -> str:
    return f"#t{k}"


def kb_entity_types(facts: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Entity word -> type, from KB facts ``(entity, R_attribute, value)``: the value is of type ``attribute``.

    For the restaurant KB the types are the paper's seven: cuisine, location, price, number (party size),
    rating, phone, address. A value of several words is not typed (matching is word by word).
    """
    types: dict[str, str] = {}
    for _entity, attribute, value in facts:
        words = tokenize(value)
        if len(words) == 1:
            types.setdefault(words[0], attribute.removeprefix("R_").lower())
    return types


def lookup_table(keys: Sequence[str], values: Sequence, default: int | str) -> tf.lookup.StaticHashTable:
    """A string -> int32 (or string, for a string ``default``) table of ``keys`` to ``values``; ``default`` for any
    other key. Empty ``keys`` give a table that answers ``default`` for every key (TensorFlow refuses an empty one)."""
    dtype = tf.string if isinstance(default, str) else tf.int32
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(keys) or [""], tf.string), tf.constant(list(values) or [default], dtype)), default)


@dataclass(frozen=True)
class FeatureSpec:
    """What the featuriser and the model need to agree on; saved with the model."""

    vocabulary: tuple[str, ...]
    entity_types: dict[str, str]
    candidates: tuple[str, ...]
    memory_size: int
    sentence_size: int

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.entity_types.values())))

    def word_id(self, word: str) -> int:
        return self._index.get(word, UNK_ID)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {word: i for i, word in enumerate(self.vocabulary)}

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> FeatureSpec:
        raw = json.loads(text)
        return cls(tuple(raw["vocabulary"]), raw["entity_types"], tuple(raw["candidates"]), raw["memory_size"],
                   raw["sentence_size"])


def build_spec(task: TaskData | TaskFiles, memory_size: int = 100, max_sentence_size: int = 40) -> FeatureSpec:
    """Vocabulary from the training dialogs, the candidates and the KB; entity types from the KB and dialogs."""
    if isinstance(task, TaskFiles):
        task = TaskData.load(task, splits=("trn",))
    if task.files is not None and task.files.candidates is None:
        raise FileNotFoundError(f"task {task.task}: no candidates file next to its dialogs")
    return spec_from_sentences(task.candidates, task.facts, task.sentences("trn"), memory_size, max_sentence_size)


def spec_from_sentences(candidates: Sequence[str], facts: Sequence[tuple[str, str, str]], sentences: Iterable[str],
                        memory_size: int = 100, max_sentence_size: int = 40) -> FeatureSpec:
    """The spec from its sources: candidates, KB facts and the training sentences (utterances, KB results)."""
    candidates = tuple(candidates)
    entity_types = kb_entity_types(facts)
    words: set[str] = set()
    longest = 1
    every = set(candidates) | set(sentences) | {f"{entity} {attribute} {value}" for entity, attribute, value in facts}
    for sentence in every:
        tokens = tokenize(sentence)
        words.update(tokens)
        longest = max(longest, len(tokens))
    types = sorted(set(entity_types.values()))
    specials = [PAD, UNK, *SPEAKER_WORDS.values(), *(time_word(k) for k in range(TIME_FEATURES)),
                *(TYPE_PREFIX + t for t in types)]
    vocabulary = specials + sorted(words - set(specials))
    return FeatureSpec(tuple(vocabulary), entity_types, candidates, memory_size, min(longest, max_sentence_size))


def candidate_type_slots(spec: FeatureSpec, per_type: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """For match type: each candidate's entity word ids, grouped by type.

    Returns ``entity_ids`` [C, K, per_type] (0 = none) and ``type_word_ids`` [K] (the type words' ids), with K
    the number of types: slot k of candidate c lists the candidate's words of type k.
    """
    types = spec.types
    entity_ids = np.zeros((len(spec.candidates), len(types), per_type), dtype=np.int32)
    for c, candidate in enumerate(spec.candidates):
        filled = [0] * len(types)
        for word in tokenize(candidate):
            kind = spec.entity_types.get(word)
            if kind is None:
                continue
            k = types.index(kind)
            if filled[k] < per_type:
                entity_ids[c, k, filled[k]] = spec.word_id(word)
                filled[k] += 1
    type_word_ids = np.array([spec.word_id(TYPE_PREFIX + t) for t in types], dtype=np.int32)
    return entity_ids, type_word_ids


class Featurizer(tf.Module):
    """Dialog text to padded word-id tensors, in TensorFlow ops (so that it runs inside the SavedModel)."""

    def __init__(self, spec: FeatureSpec, name: str | None = None) -> None:
        super().__init__(name=name)
        self.memory_size = spec.memory_size
        self.sentence_size = spec.sentence_size
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(spec.vocabulary),
                                                tf.range(len(spec.vocabulary), dtype=tf.int64)),
            default_value=UNK_ID)
        self.speaker_ids = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(list(SPEAKER_WORDS)),
                                                tf.constant([spec.word_id(w) for w in SPEAKER_WORDS.values()],
                                                            tf.int64)),
            default_value=PAD_ID)
        self.first_time_id = spec.word_id(time_word(0))

    def sentence_ids(self, text: tf.Tensor) -> tf.Tensor:
        """[...] strings -> [..., sentence_size] int32 word ids (truncated, zero-padded)."""
        tokens = tf.strings.split(tf.strings.lower(text, encoding="utf-8"))
        ids = tf.ragged.map_flat_values(self.table.lookup, tokens)
        shape = tf.concat([tf.shape(text, out_type=tf.int64), [self.sentence_size]], axis=0)
        return tf.cast(ids.to_tensor(default_value=PAD_ID, shape=shape), tf.int32)

    def slots(self, count: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The memory layout: for [B] memory counts, [B, memory_size] the index of the memory each slot holds
        (slot j: the memory j steps back from the query; 0 where empty) and whether the slot holds one."""
        source = count[:, tf.newaxis] - 1 - tf.range(self.memory_size, dtype=tf.int32)[tf.newaxis, :]
        return tf.maximum(source, 0), source >= 0

    def __call__(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        """``memory``/``memory_speaker``: [B, M0] strings, oldest first, padded at the end with speaker "".

        Returns ``memory`` [B, memory_size, sentence_size + 2] (most recent memory first; the last two ids are
        the time and speaker words; empty slots all zero) and ``query`` [B, sentence_size].
        """
        # One empty column so that a dialog's first turn (no memory yet) still has something to gather from.
        memory = tf.pad(memory, [[0, 0], [0, 1]])
        memory_speaker = tf.pad(memory_speaker, [[0, 0], [0, 1]])
        # Each distinct line once: a batch of consecutive turns repeats its dialogs' histories line for line.
        distinct, line = tf.unique(tf.reshape(memory, [-1]))
        words = tf.gather(self.sentence_ids(distinct), tf.reshape(line, tf.shape(memory)))  # [B, M0 + 1, S]
        speakers = tf.cast(self.speaker_ids.lookup(memory_speaker), tf.int32)  # [B, M0]
        count = tf.reduce_sum(tf.cast(tf.not_equal(memory_speaker, ""), tf.int32), axis=1)  # [B]
        source, valid = self.slots(count)
        ago = tf.range(self.memory_size, dtype=tf.int32)[tf.newaxis, :]  # [1, M]
        times = tf.broadcast_to(self.first_time_id + ago, tf.shape(source))
        gathered = tf.concat([
            tf.gather(words, source, batch_dims=1),
            times[..., tf.newaxis],
            tf.gather(speakers, source, batch_dims=1)[..., tf.newaxis],
        ], axis=-1)
        memory_ids = tf.where(valid[..., tf.newaxis], gathered, tf.zeros_like(gathered))
        return {"memory": memory_ids, "query": self.sentence_ids(query)}
