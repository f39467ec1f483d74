"""DialogTrainer: the standard TFX Trainer fitting a registered method (``models.methods``), the code of
``dialog train``.

The executor adds one thing to the standard one: the URI of the Examples artifact, so that ``run_fn`` reads the
candidate set and KB facts the ExampleGen stored inside it. ``custom_config`` names the method (``method``) and
holds the fields of its config (``models.training.train_config``: model, match_type, hops, epochs, ...).
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import asdict
from typing import Any

from absl import logging
from tfx.components.trainer import executor as trainer_executor
from tfx.components.trainer.component import Trainer
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.dsl.components.base import executor_spec
from tfx.proto import trainer_pb2
from tfx.types import artifact_utils, standard_component_specs

from components.corpus_resources import read_resources
from data.atomic import write_text_atomic
from models import methods
from models.examples import DialogId, TaskData, TurnExample
from models.gfile import GFILE
from models.tf_examples import read_tf_examples
from models.training import TrainConfig, train_config

EXAMPLES_URI_KEY = "examples_uri"
METHOD_KEY = "method"
SUMMARY_FILE = "training_summary.json"


class Executor(trainer_executor.GenericExecutor):
    def _GetFnArgs(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
                   exec_properties: dict[str, Any]) -> FnArgs:
        fn_args = super()._GetFnArgs(input_dict, output_dict, exec_properties)
        examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
        fn_args.custom_config = {**(fn_args.custom_config or {}), EXAMPLES_URI_KEY: examples.uri}
        return fn_args


def dialog_order(example: TurnExample) -> tuple[DialogId, int]:
    """The dialog (task, split, number) and turn: the order of the corpus files."""
    return DialogId.parse(example.dialog_id), example.turn


# TFX calls this: the Trainer's entry point.
def run_fn(fn_args: FnArgs) -> None:
    """Fit the named method on the ``train`` split, keep the best epoch on ``eval``, export to the serving model
    directory."""
    settings = dict(fn_args.custom_config)
    resources = read_resources(settings.pop(EXAMPLES_URI_KEY))
    method = methods.get(settings.pop(METHOD_KEY))
    config = train_config(**settings)
    # In dialog order, as the files hold them (Beam shuffles files): the same data trains the same model.
    trn, dev = (sorted(read_tf_examples(files), key=dialog_order) for files in (fn_args.train_files,
                                                                                 fn_args.eval_files))
    logging.info("DialogTrainer: %s on %d train and %d eval turns, tasks %s, %s", method.name, len(trn), len(dev),
                 resources.tasks, config)
    task = TaskData.of_examples(trn, dev, resources.candidates, resources.facts)
    # The Evaluator measures the complete responses on dev next: the summary need not.
    fitted = method.fit(task, fn_args.serving_model_dir,
                        methods.Settings(config=config, verbose=2, log_dir=fn_args.model_run_dir, evaluate_dev=False))
    summary = fitted.summary if isinstance(fitted, methods.Fitted) else {}
    write_text_atomic(posixpath.join(fn_args.model_run_dir, SUMMARY_FILE),
                      json.dumps({"tasks": list(resources.tasks), **summary}, indent=1), GFILE)
    trained = summary.get("template_model", summary)  # the template ranker's: its template model's
    logging.info("DialogTrainer: best epoch %d, dev per-response accuracy %.2f%%", trained["best_epoch"],
                 trained["dev_per_response_accuracy"])


def DialogTrainer(examples: Any, method: str, config: TrainConfig | dict[str, Any]) -> Trainer:  # noqa: N802
    """A Trainer fitting the registered ``method`` with ``config``."""
    settings = {METHOD_KEY: method, **(config if isinstance(config, dict) else asdict(config))}
    return Trainer(run_fn=f"{__name__}.run_fn", examples=examples,
                   train_args=trainer_pb2.TrainArgs(splits=["train"]),
                   eval_args=trainer_pb2.EvalArgs(splits=["eval"]),
                   custom_config=settings,
                   custom_executor_spec=executor_spec.ExecutorClassSpec(Executor))
