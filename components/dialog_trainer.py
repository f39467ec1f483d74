"""DialogTrainer: the standard TFX Trainer fitting a registered method (``models.methods``), the code of
``dialog train``.

The executor adds one thing to the standard one: the URI of the Examples artifact, so that ``run_fn`` reads the
candidate set and KB facts the ExampleGen stored inside it. ``custom_config`` names the method (``method``) and
holds the fields of its config (``models.training.train_config``: model, match_type, hops, epochs, ...).

``run_fn`` trains on as many workers as ``TF_CONFIG`` names (``models.distribute``: MultiWorkerMirroredStrategy for
several, the default strategy for one, the same code); only the chief writes the model and the summary. With
``vertex`` (``components.vertex_training``) the Trainer runs as a Vertex AI custom job on that worker pool.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from absl import logging
from tfx.components.trainer import executor as trainer_executor
from tfx.components.trainer.component import Trainer
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.components.util import udf_utils
from tfx.dsl.components.base import executor_spec
from tfx.proto import trainer_pb2
from tfx.types import artifact_utils, standard_component_specs

from components.corpus_resources import read_resources
from data.atomic import write_text_atomic
from models import methods
from models.distribute import scratch_dir, this_worker, training_strategy
from models.examples import DialogId, TaskData, TurnExample
from models.gfile import GFILE
from models.tf_examples import read_tf_examples
from models.training import TrainConfig, train_config

if TYPE_CHECKING:
    from components.vertex_training import VertexTraining

EXAMPLES_URI_KEY = "examples_uri"
METHOD_KEY = "method"
SUMMARY_FILE = "training_summary.json"
# The keys of TFX's Google Cloud AI Platform extension (tfx.extensions.google_cloud_ai_platform: the Vertex job's
# region, worker pool, ...) all start so. They stay in custom_config when the job runs this Trainer remotely, and
# are no setting of the method: run_fn drops them.
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


def dialog_order(example: TurnExample) -> tuple[DialogId, int]:
    """The dialog (task, split, number) and turn: the order of the corpus files."""
    return DialogId.parse(example.dialog_id), example.turn


# TFX calls this: the Trainer's entry point.
def run_fn(fn_args: FnArgs) -> None:
    """Fit the named method on the ``train`` split, keep the best epoch on ``eval``, export to the serving model
    directory.

    On every worker ``TF_CONFIG`` names (one process when it names none): each trains the same model in step, and
    each exports it, since saving may need every worker (``models.distribute``); the chief to the serving model
    directory, with the training summary and logs in the model run directory, the others to a scratch directory
    removed at once."""
    # First of all: several workers' strategy sets up collective ops, which only works before any other TF op.
    worker = this_worker()
    strategy = training_strategy(worker)
    settings = {key: value for key, value in fn_args.custom_config.items() if not key.startswith(CLOUD_KEY_PREFIX)}
    resources = read_resources(settings.pop(EXAMPLES_URI_KEY))
    method = methods.get(settings.pop(METHOD_KEY))
    config = train_config(**settings)
    # In dialog order, as the files hold them (Beam shuffles files): the same data trains the same model.
    trn, dev = (sorted(read_tf_examples(files), key=dialog_order) for files in (fn_args.train_files,
                                                                                 fn_args.eval_files))
    logging.info("DialogTrainer: %s on %d train and %d eval turns, tasks %s, %s; %s %d of %d workers", method.name,
                 len(trn), len(dev), resources.tasks, config, worker.task_type, worker.task_index, worker.workers)
    task = TaskData.of_examples(trn, dev, resources.candidates, resources.facts)
    scratch = scratch_dir(worker)
    model_dir, log_dir = ((fn_args.serving_model_dir, fn_args.model_run_dir) if scratch is None
                          else (posixpath.join(scratch, "model"), posixpath.join(scratch, "logs")))
    try:
        with strategy.scope():
            # The Evaluator measures the complete responses on dev next: the summary need not.
            fitted = method.fit(task, model_dir, methods.Settings(config=config, verbose=2, log_dir=log_dir,
                                                                  evaluate_dev=False))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if scratch is not None:
        logging.info("DialogTrainer: %s %d trained beside the chief, which writes the model", worker.task_type,
                     worker.task_index)
        return
    summary = fitted.summary if isinstance(fitted, methods.Fitted) else {}
    write_text_atomic(posixpath.join(fn_args.model_run_dir, SUMMARY_FILE),
                      json.dumps({"tasks": list(resources.tasks), **summary}, indent=1), GFILE)
    trained = summary.get("template_model", summary)  # the template ranker's: its template model's
    logging.info("DialogTrainer: best epoch %d, dev per-response accuracy %.2f%%", trained["best_epoch"],
                 trained["dev_per_response_accuracy"])


def DialogTrainer(examples: Any, method: str, config: TrainConfig | dict[str, Any], *,  # noqa: N802
                  vertex: VertexTraining | None = None) -> Trainer:
    """A Trainer fitting the registered ``method`` with ``config``; with ``vertex``, as a Vertex AI custom job on
    its worker pool (the job runs this module's executor, so ``run_fn`` is the same)."""
    settings = {METHOD_KEY: method, **(config if isinstance(config, dict) else asdict(config))}
    spec = executor_spec.ExecutorClassSpec(Executor)
    if vertex is not None:
        settings, spec = {**settings, **vertex.custom_config()}, vertex.executor_spec()
    return Trainer(run_fn=f"{__name__}.run_fn", examples=examples,
                   train_args=trainer_pb2.TrainArgs(splits=["train"]),
                   eval_args=trainer_pb2.EvalArgs(splits=["eval"]),
                   custom_config=settings,
                   custom_executor_spec=spec)
