"""MovieTrainer: the standard TFX Trainer fitting the streamed joint MemN2N (``models.movie.streamed``) on a Movie
Dialog Examples artifact.

As ``DialogTrainer``, the executor adds the Examples URI to ``custom_config``, so that ``run_fn`` reads the
entities, KB triples and candidate set the MovieExampleGen stored inside the artifact; ``custom_config`` holds the
fields of :class:`~models.movie.streamed.StreamedConfig`. The splits are read as TFRecord streams, never as lists.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import tensorflow as tf
from absl import logging
from tfx.components.trainer.component import Trainer
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.dsl.components.base import executor_spec
from tfx.proto import trainer_pb2

from components.dialog_trainer import CLOUD_KEY_PREFIX, EXAMPLES_URI_KEY, SUMMARY_FILE, Executor
from components.movie_example_gen import read_movie_resources
from data.atomic import write_text_atomic
from models.distribute import scratch_dir, this_worker, training_strategy
from models.gfile import GFILE
from models.movie.records import MovieCandidates
from models.movie.streamed import StreamedConfig, train_streamed

if TYPE_CHECKING:
    from components.vertex_training import VertexTraining


def _files(patterns: list[str]) -> list[str]:
    return sorted(path for pattern in patterns for path in tf.io.gfile.glob(pattern))


# TFX calls this: the Trainer's entry point.
def run_fn(fn_args: FnArgs) -> None:
    """Fit on the ``train`` split, keep the best epoch on ``eval``, export to the serving model directory; on every
    worker ``TF_CONFIG`` names, only the chief's model kept (as ``DialogTrainer``'s ``run_fn``)."""
    worker = this_worker()
    strategy = training_strategy(worker)  # before any other TF op
    settings = {key: value for key, value in fn_args.custom_config.items() if not key.startswith(CLOUD_KEY_PREFIX)}
    resources = read_movie_resources(settings.pop(EXAMPLES_URI_KEY))
    config = StreamedConfig(**settings)
    logging.info("MovieTrainer: the joint MemN2N on tasks %s, %s; %s %d of %d workers", resources["tasks"], config,
                 worker.task_type, worker.task_index, worker.workers)
    scratch = scratch_dir(worker)
    model_dir, log_dir = ((fn_args.serving_model_dir, fn_args.model_run_dir) if scratch is None
                          else (posixpath.join(scratch, "model"), posixpath.join(scratch, "logs")))
    try:
        summary = train_streamed(resources["entities"], resources["triples"],
                                 MovieCandidates.from_json(resources["candidates"]), _files(fn_args.train_files),
                                 _files(fn_args.eval_files), config, model_dir, verbose=2, log_dir=log_dir,
                                 strategy=strategy)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if scratch is not None:
        return
    write_text_atomic(posixpath.join(fn_args.model_run_dir, SUMMARY_FILE),
                      json.dumps({"tasks": resources["tasks"], **summary}, indent=1), GFILE)
    logging.info("MovieTrainer: best epoch %d, dev hits %s", summary["best_epoch"], summary["dev_hits"])


def MovieTrainer(examples: Any, config: StreamedConfig, *,  # noqa: N802 (component)
                 vertex: VertexTraining | None = None) -> Trainer:
    """A Trainer fitting the streamed joint MemN2N with ``config``; with ``vertex``, as a Vertex AI custom job on its
    worker pool (whose replicas run the same executor, hence this ``run_fn``)."""
    settings: dict[str, Any] = asdict(config)
    spec = executor_spec.ExecutorClassSpec(Executor)
    if vertex is not None:
        settings, spec = {**settings, **vertex.custom_config()}, vertex.executor_spec()
    return Trainer(run_fn=f"{__name__}.run_fn", examples=examples,
                   train_args=trainer_pb2.TrainArgs(splits=["train"]),
                   eval_args=trainer_pb2.EvalArgs(splits=["eval"]),
                   custom_config=settings,
                   custom_executor_spec=spec)
