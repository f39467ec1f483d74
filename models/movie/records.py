"""Movie Dialog exchanges as tf.Examples, and the candidate set the pipeline ranks them among.

One example per exchange, with the features of the dialog-bAbI examples (``models.tf_examples``: ``dialog_id``,
``task``, ``split``, ``turn``, ``memory`` = the dialog's earlier texts, ``memory_speaker``, ``query``, ``answer``,
``answer_index``) and three of its own:

- ``answers``: every correct answer (QA answers are lists; hits@k counts any of them);
- ``answer_indices``: their positions in the candidate set (the Evaluator's label);
- ``candidate_range``: ``[start, stop)`` of the candidates the example is ranked among, as Table 6 ranks them:
  tasks 1-3 among the KB entities, task 4 among its split's candidate file;
- ``memory_tokens``, ``query_tokens``, ``answers_tokens``: the same texts in appendix A's tokens
  (``GraphEntityText.parse``: entities as one token, every word kept). Parsing depends on the entities alone, and
  is most of the cost of featurising an exchange: done once here, it is not done again in every training epoch.
  ``answers_tokens`` holds the first :data:`~models.movie.text.MAX_ANSWERS` answers alone, the ones training
  draws its gold from. A QA question may have dozens of answers (every movie of an actor), and the tokens of all
  of them were a large share of a QA record's bytes, read again in every epoch and held whole by the Evaluator on
  the local Beam runner (which keeps a stage's whole output, here the dev and test records merged, before the next
  stage reads it; docs/movie.md has the sizes). ``answers`` keeps every answer.

The candidate set (:class:`MovieCandidates`) is the entities, then task 4's dev and test candidate files. A task-4
training reply is in none of them: its ``answer_index`` is -1 and the Trainer scores it from its text.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import tensorflow as tf

from data.movie.reader import MovieCorpus, iter_dialogs, read_candidates
from models.examples import BOT, USER
from models.movie.examples import MovieExample, dialog_examples
from models.movie.graph_text import GraphEntityText
from models.movie.text import MAX_ANSWERS
from models.tf_examples import LABEL_KEY, NO_CHALLENGE, NOT_A_CANDIDATE

TASK_NAMES = {1: "movie-qa", 2: "movie-recs", 3: "movie-qarecs", 4: "movie-reddit"}
ANSWERS, ANSWER_INDICES, CANDIDATE_RANGE = "answers", "answer_indices", "candidate_range"
ENTITIES = "entities"
# Feature of the parsed text of each text feature.
PARSED = {"memory": "memory_tokens", "query": "query_tokens", ANSWERS: "answers_tokens"}
PARSE_CHUNK = 4096  # texts parsed per call
CHUNK = 1000  # exchanges of a task file turned into tf.Examples together


@dataclass(frozen=True)
class MovieCandidates:
    """Every candidate the model scores, in one list: the entities, then task 4's candidate files by split."""

    texts: tuple[str, ...]
    ranges: dict[str, tuple[int, int]]  # "entities", or a task-4 split -> [start, stop)

    @classmethod
    def of(cls, entities: Sequence[str], replies: dict[str, Sequence[str]]) -> MovieCandidates:
        texts, ranges = list(entities), {ENTITIES: (0, len(entities))}
        for split in sorted(replies):
            ranges[split] = (len(texts), len(texts) + len(replies[split]))
            texts += replies[split]
        return cls(tuple(texts), ranges)

    def range_of(self, task: int, split: str) -> tuple[int, int]:
        """What an example of ``task`` in ``split`` is ranked among; a task-4 split without a candidate file (its
        training split) has none: (0, 0)."""
        return self.ranges[ENTITIES] if task != 4 else self.ranges.get(split, (0, 0))

    def indices(self) -> dict[tuple[int, int], dict[str, int]]:
        """Per range, candidate text -> its first position."""
        found: dict[tuple[int, int], dict[str, int]] = {}
        for start, stop in self.ranges.values():
            index: dict[str, int] = {}
            for position in range(start, stop):
                index.setdefault(self.texts[position], position)
            found[(start, stop)] = index
        return found

    def to_json(self) -> dict:
        return {"texts": list(self.texts), "ranges": {k: list(v) for k, v in self.ranges.items()}}

    @classmethod
    def from_json(cls, raw: dict) -> MovieCandidates:
        return cls(tuple(raw["texts"]), {k: (int(v[0]), int(v[1])) for k, v in raw["ranges"].items()})


def movie_candidates(corpus: MovieCorpus, entities: Sequence[str] | None = None) -> MovieCandidates:
    """The entities (``entities``, when the caller has read them already), then the task-4 candidate files: what
    MovieExampleGen's examples index and the Trainer scores."""
    entities = corpus.entity_list() if entities is None else list(entities)
    return MovieCandidates.of(entities, {split: read_candidates(path, corpus.fs)
                                         for split, path in corpus.candidates.items()})


def history_speakers(history: Sequence[str]) -> list[str]:
    """The user speaks first, then the two alternate."""
    return [USER if i % 2 == 0 else BOT for i in range(len(history))]


class Parser:
    """A text function of :class:`GraphEntityText` (``parse`` by default) over lists of texts, traced once."""

    def __init__(self, entities: Sequence[str] | GraphEntityText, method: str = "parse") -> None:
        text = entities if isinstance(entities, GraphEntityText) else GraphEntityText(entities)
        self.parse = tf.function(getattr(text, method), autograph=False,
                                 input_signature=[tf.TensorSpec([None], tf.string)])

    def __call__(self, texts: Sequence[str]) -> list[str]:
        parsed: list[str] = []
        for start in range(0, len(texts), PARSE_CHUNK):
            parsed += [t.decode() for t in self.parse(tf.constant(list(texts[start:start + PARSE_CHUNK]))).numpy()]
        return parsed


def movie_tf_examples(examples: Sequence[MovieExample], candidates: MovieCandidates,
                      indices: dict[tuple[int, int], dict[str, int]], parser: Parser) -> Iterator[tf.train.Example]:
    """The tf.Examples of exchanges, their texts parsed together (a call per chunk, not per text)."""
    texts = [t for e in examples for t in (*e.history, e.query, *e.answers[:MAX_ANSWERS])]
    parsed = iter(parser(texts))
    for example in examples:
        tokens = {"memory": [next(parsed) for _ in example.history], "query": [next(parsed)],
                  ANSWERS: [next(parsed) for _ in example.answers[:MAX_ANSWERS]]}
        yield movie_tf_example(example, candidates, indices, tokens)


def movie_tf_example(example: MovieExample, candidates: MovieCandidates,
                     indices: dict[tuple[int, int], dict[str, int]], tokens: dict[str, list[str]]
                     ) -> tf.train.Example:
    """The tf.Example of one exchange; ``indices`` is ``candidates.indices()``, computed once per file; ``tokens``
    the parsed ``memory``, ``query`` and ``answers`` (:func:`movie_tf_examples`)."""
    span = candidates.range_of(example.task, example.split)
    index = indices.get(span, {})
    found = [index[a] for a in example.answers if a in index]
    out = tf.train.Example()
    feature = out.features.feature
    texts = (("dialog_id", [f"movie-{example.task}/{example.split}/{example.dialog}"]),
             ("task", [TASK_NAMES[example.task]]), ("split", [example.split]), ("challenge", [NO_CHALLENGE]),
             ("memory", example.history), ("memory_speaker", history_speakers(example.history)),
             ("query", [example.query]), ("answer", [example.answers[0] if example.answers else ""]),
             (ANSWERS, example.answers))
    texts += tuple((PARSED[key], values) for key, values in tokens.items())
    for key, values in texts:
        feature[key].bytes_list.value.extend([v.encode("utf-8") for v in values])
    feature["turn"].int64_list.value.append(example.exchange - 1)
    first = index.get(example.answers[0], NOT_A_CANDIDATE) if example.answers else NOT_A_CANDIDATE
    feature[LABEL_KEY].int64_list.value.append(first)
    feature[ANSWER_INDICES].int64_list.value.extend(found)
    feature[CANDIDATE_RANGE].int64_list.value.extend(span)
    return out


def task_file_records(lines: Iterable[str], path: str | Path, task: int, split: str, entities: Sequence[str],
                      candidates: MovieCandidates) -> Iterator[bytes]:
    """The serialised tf.Examples of one task file's ``lines`` (``path`` names it in errors), a chunk of exchanges
    at a time: a paper-scale training file is never held whole."""
    indices, parser = candidates.indices(), Parser(entities)
    chunk: list[MovieExample] = []
    for index, dialog in enumerate(iter_dialogs(lines, path, entities)):
        chunk += dialog_examples(dialog, task, split, index)
        if len(chunk) >= CHUNK:
            yield from (e.SerializeToString() for e in movie_tf_examples(chunk, candidates, indices, parser))
            chunk = []
    yield from (e.SerializeToString() for e in movie_tf_examples(chunk, candidates, indices, parser))


def write_tfrecords(target: str, records: Iterable[bytes]) -> int:
    """``records`` as one gzipped TFRecord file at ``target`` (any TensorFlow file system), written under a temporary
    name of its own and renamed, so no reader sees half a file, and two attempts of one job (a retried Beam bundle)
    never write into the same file: the last renamed wins whole. Returns the record count."""
    staging = f"{target}.tmp-{uuid.uuid4().hex}"
    count = 0
    try:
        with tf.io.TFRecordWriter(staging, options="GZIP") as writer:
            for record in records:
                writer.write(record)
                count += 1
        tf.io.gfile.rename(staging, target, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(staging):
            tf.io.gfile.remove(staging)
        raise
    return count
