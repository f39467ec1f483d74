"""Table 6's learned rows trained by the pipeline's streamed trainer (:mod:`models.movie.streamed`), from a corpus.

Table 6's own trainers (:mod:`models.movie.neural`) hold a task's training split in lists and score every entity at
every step: at the paper's scale that is about 2 ms an example, and only the QA column fits in a session. The
streamed trainer (one example per exchange, a sampled softmax, batches of 512, row-wise Adam) is the one the
pipeline's Trainer runs. Here it trains from the corpus files themselves: each task file of ``train`` and ``dev`` is
written once as gzipped tf.Examples, as MovieExampleGen writes them, a thousand exchanges at a time, so memory does
not grow with the corpus (under the work directory, or in the directory a table's methods share:
:data:`RECORDS`). What is fitted is the exported SavedModel, and a split is ranked through its ``serving_examples``
signature (each example among its split's candidates): what serving would answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tensorflow as tf

from data.atomic import write_text_atomic
from data.movie.reader import MovieCorpus
from data.reading import text_lines
from models.movie.examples import MovieData, MovieExample
from models.movie.records import (
    MovieCandidates,
    Parser,
    movie_candidates,
    movie_tf_examples,
    task_file_records,
    write_tfrecords,
)
from models.movie.streamed import StreamedConfig, train_streamed

RANK_BATCH = 512  # examples ranked per call of the SavedModel
# Key of ``Settings.memo`` naming a directory where a table's methods share the task files written as tf.Examples.
RECORDS = "movie_records"
# The memo key of where a fit exports its SavedModel (`dialog train --out`; default ``work_dir/model``).
MODEL_DIR = "movie_model_dir"


class StreamedRanker:
    """A streamed model's SavedModel ranking Movie Dialog examples: each example among its own candidates (the
    entities, or its split's task-4 candidate file), as the Evaluator and serving rank them."""

    def __init__(self, model_dir: str | Path, entities: Sequence[str], candidates: MovieCandidates) -> None:
        self._loaded = tf.saved_model.load(str(model_dir))
        self._serve = self._loaded.signatures["serving_examples"]
        self.entities, self.candidates = list(entities), candidates
        self._indices, self._parser = candidates.indices(), Parser(self.entities)  # once, not per ranking

    def rank(self, examples: Sequence[MovieExample], k: int = 10) -> list[list[str]]:
        """The first ``k`` of each example's candidates, best first; a range shorter than the SavedModel's top k is
        padded there with candidates outside it, which are dropped here."""
        ranked: list[list[str]] = []
        for start in range(0, len(examples), RANK_BATCH):
            chunk = examples[start:start + RANK_BATCH]
            batch = movie_tf_examples(chunk, self.candidates, self._indices, self._parser)
            out = self._serve(examples=tf.constant([e.SerializeToString() for e in batch]))
            for example, found, texts in zip(chunk, out["indices"].numpy(), out["responses"].numpy(), strict=True):
                low, high = self.candidates.range_of(example.task, example.split)
                if k > len(found) and len(found) < (high - low or len(self.candidates.texts)):
                    raise ValueError(f"hits@{k} asked of a model exported with the top {len(found)} candidates")
                inside = [t.decode() for i, t in zip(found, texts, strict=True) if low == high or low <= i < high]
                ranked.append(inside[:k])
        return ranked


@contextmanager
def _lines(corpus: MovieCorpus, path: str | Path) -> Iterator[Any]:
    """A task file's lines, from the local disk or the corpus' file system."""
    with text_lines(path, corpus.fs) as lines:
        yield lines


def _sources(corpus: MovieCorpus, path: str | Path) -> str:
    """What a task file's records are made from: the file, the entities and the task-4 candidate files (the
    records index them), each by path, size and modification time, as one JSON text."""
    files = [path, corpus.entities, *(corpus.candidates[split] for split in sorted(corpus.candidates))]
    stats = [(str(f), tf.io.gfile.stat(str(f))) for f in files if f is not None]
    return json.dumps([(name, stat.length, stat.mtime_nsec) for name, stat in stats])


def write_split(data: MovieData, tasks: Sequence[int], split: str, candidates: MovieCandidates,
                out: Path) -> list[str]:
    """Each task's ``split`` file as gzipped tf.Examples in ``out``, one file per task, and beside it what it was
    made from (``.sources.json``). A file is kept when there already and made from the same files, unchanged since
    (a directory shared by runs, ``--records``); else written again, renamed into place once whole. A file of that
    name with no stamp beside it was not written here: :class:`FileExistsError`, and it is left as it is. The
    files."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for task in tasks:
        path = data.corpus.tasks[task][split]
        target, stamp = out / f"{split}-task{task}.gz", out / f"{split}-task{task}.sources.json"
        if target.exists() and not stamp.exists():
            raise FileExistsError(f"{target} was not written by the streamed trainer (no {stamp.name} beside it); "
                                  "it is left as it is: move it, or keep the records in another directory")
        sources = _sources(data.corpus, path)
        if not (target.exists() and stamp.read_text() == sources):
            with _lines(data.corpus, path) as lines:
                write_tfrecords(str(target), task_file_records(lines, path, task, split, data.entities, candidates))
            write_text_atomic(stamp, sources)
        written.append(str(target))
    return written


def fit_streamed(data: MovieData, tasks: Sequence[int], config: StreamedConfig, work_dir: Path,
                 records: Path | None = None, model_dir: str | Path | None = None
                 ) -> tuple[StreamedRanker, dict[str, Any]]:
    """Train on ``tasks``' training files, keep the epoch best on their dev files, export under ``work_dir`` (or
    at ``model_dir``); the ranker and the training summary. The files are written as tf.Examples in ``records``
    (default under ``work_dir``), where another fit of the same corpus finds them."""
    if data.corpus.entities is None:
        raise FileNotFoundError(f"{data.corpus.root}: the streamed trainer ranks the entities of entities.txt, and "
                                "the corpus has none")
    candidates = movie_candidates(data.corpus, data.entities)
    records = records or work_dir / "records"
    train = write_split(data, tasks, "train", candidates, records)
    dev = write_split(data, tasks, "dev", candidates, records)
    triples = [(t.subject, t.relation, t.value) for t in data.triples]
    model_dir = model_dir or work_dir / "model"
    summary = train_streamed(data.entities, triples, candidates, train, dev, config, out=str(model_dir))
    return StreamedRanker(model_dir, data.entities, candidates), summary
