"""What every Trainer of the pipeline shares: the executor, the ``custom_config`` keys, training on as many workers
as ``TF_CONFIG`` names, the scratch directory of the workers that are not the chief, and the training summary.

The executor adds one thing to TFX's generic one: the URI of the Examples artifact (``examples_uri`` in
``custom_config``), so that a ``run_fn`` reads the resources its ExampleGen stored inside it (a candidate set, KB
facts, entities). A paper's Trainer (``components.dialog_trainer``, ``components.movie_trainer``) is its
``run_fn`` and a factory built on :func:`trainer`; the remote path (``components.vertex_training``) runs this
executor on its replicas, so a local Trainer and a Vertex AI job run the same ``run_fn``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import posixpath
import shutil
from collections.abc import Callable
from typing import Any, Protocol

from absl import logging
from tfx.components.trainer import executor as trainer_executor
from tfx.components.trainer.component import Trainer
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.components.util import udf_utils
from tfx.dsl.components.base import executor_spec
from tfx.proto import trainer_pb2
from tfx.types import artifact_utils, standard_component_specs

from data.atomic import write_text_atomic
from models.distribute import Worker, scratch_dir, this_worker, training_strategy
from models.gfile import GFILE

EXAMPLES_URI_KEY = "examples_uri"
SUMMARY_FILE = "training_summary.json"
# The keys of TFX's Google Cloud AI Platform extension (tfx.extensions.google_cloud_ai_platform: the Vertex job's
# region, worker pool, ...) all start so. They stay in custom_config when the job runs a Trainer remotely, and are
# no setting of the model: run_on_workers drops them.
CLOUD_KEY_PREFIX = "ai_platform_"


class Executor(trainer_executor.GenericExecutor):
    def _GetFnArgs(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
                   exec_properties: dict[str, Any]) -> FnArgs:
        fn_args = super()._GetFnArgs(input_dict, output_dict, exec_properties)
        examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
        fn_args.custom_config = {**(fn_args.custom_config or {}), EXAMPLES_URI_KEY: examples.uri}
        return fn_args

    def Do(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
           exec_properties: dict[str, Any]) -> None:
        if this_worker().is_chief:
            super().Do(input_dict, output_dict, exec_properties)
            return
        # A worker that is not the chief writes no model (run_fn): the base class would fail it for the model the
        # chief may not have written yet. Otherwise the same: the same arguments, the same run_fn.
        self._log_startup(input_dict, output_dict, exec_properties)
        udf_utils.get_fn(exec_properties, "run_fn")(self._GetFnArgs(input_dict, output_dict, exec_properties))


class RemoteTraining(Protocol):
    """Where a Trainer runs when not in the pipeline's own step (``components.vertex_training.VertexTraining``)."""

    def custom_config(self) -> dict[str, Any]: ...
    def executor_spec(self) -> executor_spec.ExecutorClassSpec: ...


# fit(examples_uri, settings, model_dir, log_dir, strategy, worker) -> the training summary
Fit = Callable[[str, dict[str, Any], str, str, Any, Worker], dict[str, Any]]


def release_freed_memory() -> None:
    """Give the memory a finished fit freed back to the operating system: collect Python's cycles, then (glibc)
    ``malloc_trim``. The local runner runs every component in one process, and glibc keeps what a fit freed, in
    pieces between the blocks still in use: the next components (the Evaluators, which the local Beam runner gives
    the dev and test records whole) then started from the Trainers' high-water mark, and the Movie Dialog pipeline's
    peak was theirs (docs/movie.md). Elsewhere than glibc, the collection alone; never an error of its own, as it
    runs after a fit that may have failed."""
    gc.collect()
    name = ctypes.util.find_library("c")
    try:
        trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        trim = None
    if trim is not None:
        trim(0)


def run_on_workers(fn_args: FnArgs, name: str, fit: Fit) -> dict[str, Any] | None:
    """``fit`` on every worker ``TF_CONFIG`` names (one process when it names none), each training the same model in
    step and each exporting it, since saving may need every worker (``models.distribute``): the chief to the
    serving model directory, with the training summary (``SUMMARY_FILE``) and logs in the model run directory, the
    others to a scratch directory removed at once. Returns the summary on the chief, None elsewhere."""
    # First of all: several workers' strategy sets up collective ops, which only works before any other TF op.
    worker = this_worker()
    strategy = training_strategy(worker)
    settings = {key: value for key, value in fn_args.custom_config.items() if not key.startswith(CLOUD_KEY_PREFIX)}
    examples_uri = settings.pop(EXAMPLES_URI_KEY)
    scratch = scratch_dir(worker)
    model_dir, log_dir = ((fn_args.serving_model_dir, fn_args.model_run_dir) if scratch is None
                          else (posixpath.join(scratch, "model"), posixpath.join(scratch, "logs")))
    try:
        summary = fit(examples_uri, settings, model_dir, log_dir, strategy, worker)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        release_freed_memory()
    if scratch is not None:
        logging.info("%s: %s %d trained beside the chief, which writes the model", name, worker.task_type,
                     worker.task_index)
        return None
    write_text_atomic(posixpath.join(fn_args.model_run_dir, SUMMARY_FILE), json.dumps(summary, indent=1), GFILE)
    return summary


def trainer(run_fn: str, examples: Any, settings: dict[str, Any], vertex: RemoteTraining | None = None) -> Trainer:
    """TFX's Trainer running ``run_fn`` (a module path) with ``settings`` as its ``custom_config``, on the
    ``train`` split, selecting on ``eval``; with ``vertex``, as a job there whose replicas run :class:`Executor`."""
    spec = executor_spec.ExecutorClassSpec(Executor)
    if vertex is not None:
        settings, spec = {**settings, **vertex.custom_config()}, vertex.executor_spec()
    return Trainer(run_fn=run_fn, examples=examples, train_args=trainer_pb2.TrainArgs(splits=["train"]),
                   eval_args=trainer_pb2.EvalArgs(splits=["eval"]), custom_config=settings,
                   custom_executor_spec=spec)
