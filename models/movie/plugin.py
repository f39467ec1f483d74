"""Dodge et al.'s Movie Dialog tasks (their own layout: a folder per task, the KB, the entities), as a paper of the
registry (``models.papers``): ``dialog train``'s networks, Table 6, and the pipeline's profiles."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from data.movie.reader import TASK_DIRECTORIES
from models import papers
from models.methods import Settings

# `dialog train --model`: the networks of Table 6, each trained by the streamed trainer (the pipeline's, which
# exports a SavedModel): on one task (--task), or jointly on every task the corpus can train.
TRAIN_MODELS = {"memn2n": "movie_memn2n", "embeddings": "movie_embeddings", "lstm": "movie_lstm",
                "joint_memn2n": "movie_joint_memn2n", "joint_embeddings": "movie_joint_embeddings"}
TRAIN_OPTIONS = ("epochs", "seed")


@dataclass(frozen=True)
class Movies(papers.LazyProfiles):
    name: str = "movie"
    title: str = "Movie Dialog (Dodge et al.)"
    pipeline: str = papers.MOVIE
    tasks: Mapping[int, str] = field(default_factory=lambda: dict(TASK_DIRECTORIES))
    methods_module: str = "models.movie.methods"
    train_models: Mapping[str, str] = field(default_factory=lambda: TRAIN_MODELS)
    train_help: str = ("memn2n, embeddings, lstm (Table 6's networks on one task, --task) and joint_memn2n, "
                       "joint_embeddings (on every task), each by the streamed trainer.")
    schema: str | None = None
    profiles_module: str = "models.movie.profiles"
    challenges: bool = False
    table_flags: frozenset[str] = frozenset({"streamed", "records"})

    def tasks_in(self, corpus: str | Path) -> tuple[int, ...]:
        """The tasks whose folder (``task1_qa/``...) the directory holds."""
        return tuple(task for task, folder in TASK_DIRECTORIES.items() if (Path(corpus) / folder).is_dir())

    def task_label(self, task: int) -> str:
        """movie-qa, movie-recs, movie-qarecs, movie-reddit (the Movie Dialog records' ``task``)."""
        return f"movie-{TASK_DIRECTORIES[task].split('_', 1)[1]}"

    def train(self, corpus: Path, task: int | None, model: str, out: str, options: Mapping[str, Any],
              settings: Settings) -> dict[str, Any]:
        from data.movie.reader import discover_movie_corpus
        from models import methods
        from models.movie.examples import MovieData
        from models.movie.methods import MovieTask, learned_tasks
        from models.movie.streamed_fit import MODEL_DIR
        from models.serving.export import prepare_output

        unknown = sorted(set(options) - set(TRAIN_OPTIONS))
        if unknown:
            raise ValueError(f"the Movie Dialog networks have no setting {', '.join(unknown)} (they train with "
                             "Table 6's settings; --epochs and --seed change them)")
        joint = model.startswith("joint_")
        if joint == (task is not None):
            raise ValueError(f"{model} trains on every task of the corpus: give no --task" if joint else
                             f"{model} trains on one task: give --task (1-4)")
        prepare_output(out)
        data = MovieData(discover_movie_corpus(corpus))
        tasks = tuple(learned_tasks(data.corpus)) if joint else (task,)
        scratch = Path(tempfile.mkdtemp(prefix="dialog-train-"))  # the tf.Example records, ours to remove
        try:
            fitted = methods.get(TRAIN_MODELS[model], self.name).fit(
                MovieTask(data, tasks, streamed=True), scratch,
                replace(settings, epochs=options.get("epochs"), seed=options.get("seed", 0),
                        memo={MODEL_DIR: out}))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return {"tasks": list(tasks), **getattr(fitted, "summary", {})}

    def tables(self, request: papers.TableRequest) -> list[Path]:
        """Table 6 (every row unless some are named; ``tasks``: its columns)."""
        from models.movie import reproduce

        return reproduce.benchmark(request.data, request.out, request.epochs, request.progress, request.methods,
                                   request.tasks, request.streamed, request.records)


PAPER = papers.register(Movies())
