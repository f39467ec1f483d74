"""MovieTrainer: the standard TFX Trainer fitting the streamed joint MemN2N (``models.movie.streamed``) on a Movie
Dialog Examples artifact.

``custom_config`` holds the fields of :class:`~models.movie.streamed.StreamedConfig`; ``run_fn`` reads the
entities, KB triples and candidate set the MovieExampleGen stored inside the artifact (its URI added by
``components.trainer_base``'s executor). The splits are read as TFRecord streams, never as lists.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import tensorflow as tf
from absl import logging
from tfx.components.trainer.component import Trainer
from tfx.components.trainer.fn_args_utils import FnArgs

from components.movie_example_gen import read_movie_resources
from components.trainer_base import RemoteTraining, run_on_workers, trainer
from models.distribute import Worker
from models.movie.records import MovieCandidates
from models.movie.streamed import StreamedConfig, train_streamed


def _files(patterns: list[str]) -> list[str]:
    return sorted(path for pattern in patterns for path in tf.io.gfile.glob(pattern))


# TFX calls this: the Trainer's entry point.
def run_fn(fn_args: FnArgs) -> None:
    """Fit on the ``train`` split, keep the best epoch on ``eval``, export to the serving model directory (on every
    worker, ``components.trainer_base.run_on_workers``)."""

    def fit(examples_uri: str, settings: dict[str, Any], model_dir: str, log_dir: str, strategy: Any,
            worker: Worker) -> dict[str, Any]:
        resources = read_movie_resources(examples_uri)
        config = StreamedConfig(**settings)
        logging.info("MovieTrainer: the joint MemN2N on tasks %s, %s; %s %d of %d workers", resources["tasks"],
                     config, worker.task_type, worker.task_index, worker.workers)
        summary = train_streamed(resources["entities"], resources["triples"],
                                 MovieCandidates.from_json(resources["candidates"]), _files(fn_args.train_files),
                                 _files(fn_args.eval_files), config, model_dir, verbose=2, log_dir=log_dir,
                                 strategy=strategy)
        return {"tasks": resources["tasks"], **summary}

    summary = run_on_workers(fn_args, "MovieTrainer", fit)
    if summary is not None:
        logging.info("MovieTrainer: best epoch %d, dev hits %s", summary["best_epoch"], summary["dev_hits"])


def MovieTrainer(examples: Any, config: StreamedConfig, *,  # noqa: N802 (component)
                 vertex: RemoteTraining | None = None) -> Trainer:
    """A Trainer fitting the streamed joint MemN2N with ``config``; with ``vertex``, as a Vertex AI custom job on its
    worker pool (whose replicas run the same executor, hence this ``run_fn``)."""
    return trainer(f"{__name__}.run_fn", examples, asdict(config), vertex)
