"""DialogTrainer: the standard TFX Trainer fitting a registered method (``models.methods``), the code of
``dialog train``.

``custom_config`` names the method (``method``) and holds the fields of its config (a network's
``models.training.TrainConfig``: model, match_type, hops, epochs, ...; the state ranker's own), which the method
builds again (``Registered.make_config``); the executor adds the Examples URI, from
which ``run_fn`` reads the candidate set and KB facts the ExampleGen stored (``components.trainer_base``, with
training on several workers and the Vertex AI path).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from absl import logging
from tfx.components.trainer.component import Trainer
from tfx.components.trainer.fn_args_utils import FnArgs

from components.corpus_resources import read_resources
from components.trainer_base import RemoteTraining, run_on_workers, trainer
from models import methods
from models.distribute import Worker
from models.examples import DialogId, TaskData, TurnExample
from models.tf_examples import read_tf_examples

METHOD_KEY = "method"


def dialog_order(example: TurnExample) -> tuple[DialogId, int]:
    """The dialog (task, split, number) and turn: the order of the corpus files."""
    return DialogId.parse(example.dialog_id), example.turn


# TFX calls this: the Trainer's entry point.
def run_fn(fn_args: FnArgs) -> None:
    """Fit the named method on the ``train`` split, keep the best epoch on ``eval``, export to the serving model
    directory (on every worker, ``components.trainer_base.run_on_workers``)."""

    def fit(examples_uri: str, settings: dict[str, Any], model_dir: str, log_dir: str, strategy: Any,
            worker: Worker) -> dict[str, Any]:
        resources = read_resources(examples_uri)
        method = methods.get(settings.pop(METHOD_KEY))
        config = method.make_config(**settings)  # the method's own config type
        # In dialog order, as the files hold them (Beam shuffles files): the same data trains the same model.
        trn, dev = (sorted(read_tf_examples(files), key=dialog_order) for files in (fn_args.train_files,
                                                                                     fn_args.eval_files))
        logging.info("DialogTrainer: %s on %d train and %d eval turns, tasks %s, %s; %s %d of %d workers",
                     method.name, len(trn), len(dev), resources.tasks, config, worker.task_type, worker.task_index,
                     worker.workers)
        task = TaskData.of_examples(trn, dev, resources.candidates, resources.facts)
        with strategy.scope():
            # The Evaluator measures the complete responses on dev next: the summary need not.
            fitted = method.fit(task, model_dir, methods.Settings(config=config, verbose=2, log_dir=log_dir,
                                                                  evaluate_dev=False))
        return {"tasks": list(resources.tasks), **(fitted.summary if isinstance(fitted, methods.Fitted) else {})}

    summary = run_on_workers(fn_args, "DialogTrainer", fit)
    if summary is not None:
        trained = summary.get("template_model", summary)  # the template ranker's: its template model's
        logging.info("DialogTrainer: best epoch %d, dev per-response accuracy %.2f%%", trained["best_epoch"],
                     trained["dev_per_response_accuracy"])


def DialogTrainer(examples: Any, method: str, config: Any, *,  # noqa: N802
                  vertex: RemoteTraining | None = None) -> Trainer:
    """A Trainer fitting the registered ``method`` with ``config`` (a dataclass of the method's config type, or
    its fields); with ``vertex``, as a Vertex AI custom job on
    its worker pool (whose replicas run the same executor, so ``run_fn`` is the same)."""
    settings = {METHOD_KEY: method, **(config if isinstance(config, dict) else asdict(config))}
    return trainer(f"{__name__}.run_fn", examples, settings, vertex)
