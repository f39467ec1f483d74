"""The methods of Majumdar et al.'s Tables 8-9, registered in the one registry (``models.methods``), in the
tables' column order: SMN, then MMN (``models.banking.networks``), then ours, the state ranker
(``models.banking.state_ranker``), and its ablations.

Each is ``fit(task, work_dir, settings) -> Ranker`` on a :class:`~models.examples.TaskData`. Without
``settings.config`` a method follows the paper's recipe (:func:`~models.banking.networks.paper_config`, at most
``settings.epochs`` of the paper's 20, stopping after 3 epochs without a better dev); with it it trains exactly
that config. SMN writes its SavedModel at ``work_dir``, MMN one per network under it. The notes say which epochs
were kept and, for MMN, which selector learning rate was chosen and how well it routes dev.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from data.banking.domain import INTENTS
from data.banking.labels import DEV_CHALLENGES
from data.layout import BANKING_TASK
from models.banking.labelled import dialog_intents, labels_path, read_task_labels
from models.banking.networks import PAPER_EPOCHS, paper_config, train_mmn, train_smn
from models.banking.state_ranker import FEATURE_GROUPS, StateConfig, train_state_ranker
from models.examples import TaskData
from models.features import build_spec
from models.methods import Fitted, NotApplicable, Settings, register
from models.serving.ranker import ExportedRanker
from models.training import TrainConfig

PAPER = "banking"


def config_of(settings: Settings) -> TrainConfig:
    """``settings.config``, or the paper's settings for at most ``settings.epochs`` epochs."""
    if settings.config is not None:
        return settings.config
    # Stop after 3 epochs without a better dev: the best epoch is kept anyway, so later ones would only cost time.
    return paper_config(min(settings.epochs or PAPER_EPOCHS, PAPER_EPOCHS), patience=3, seed=settings.seed)


@register("smn", PAPER, "SMN")
def smn(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    """One MemN2N on the dialogs of every intent."""
    config = config_of(settings)
    spec = build_spec(task, memory_size=config.max_memory)
    ranker, summary = train_smn(spec, task.split("trn"), task.split("dev"), config, work_dir, settings.verbose,
                                settings.log_dir, settings.top_k)
    note = (f"best epoch {summary['best_epoch']}/{config.epochs} on {settings.chosen_on} "
            f"({summary['dev_per_response_accuracy']}%)")
    return Fitted(ranker, note, summary)


@register("mmn", PAPER, "MMN")
def mmn(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    """A MemN2N per intent and the selector that routes a dialog to one; the intents come from the labels
    sidecar. Its summary holds each network's, by intent, and the chosen selector's as ``selector``."""
    if task.task != BANKING_TASK:
        raise NotApplicable("a network per banking intent: only the banking task has intents")
    if not os.path.lexists(labels_path(task.files)):  # present but not a file: the reader names it
        raise NotApplicable(f"no labels sidecar ({labels_path(task.files).name}) to give each dialog's intent")
    intents = dialog_intents(task, read_task_labels(task.files), ("trn", "dev"))
    config = config_of(settings)
    spec = build_spec(task, memory_size=config.max_memory)
    ranker, summaries = train_mmn(spec, task.split("trn"), task.split("dev"), intents, config, work_dir,
                                  settings.verbose, settings.log_dir, settings.top_k)
    best_epochs = ", ".join(str(summaries[intent]["best_epoch"]) for intent in INTENTS)
    selector = summaries["selector"]
    diverged = "".join(f", {rate} diverged" for rate in selector.get("diverged_learning_rates", []))
    kind = ("words (logistic regression)" if selector["selector"] == "words" else
            f"MemN2N, learning rate {selector['config']['learning_rate']} chosen on {settings.chosen_on}{diverged}")
    note = (f"intent networks' best epochs {best_epochs}; selector ({kind}) {settings.chosen_on} "
            f"{selector['dev_per_response_accuracy']}%")
    return Fitted(ranker, note, summaries)


def _state_ranker(removed: tuple[str, ...] = ()) -> Callable[[TaskData, Path, Settings], Fitted]:
    """The state ranker (``models.banking.state_ranker``), or an ablation without the feature groups ``removed``:
    the paper's loop (at most ``settings.epochs`` of 20, best epoch on dev), trained with ``settings.seed``."""

    def fit(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
        # A config (a pipeline profile's, `dialog train`'s) is trained as given; else the paper's loop.
        config = (replace(settings.config, removed=removed or settings.config.removed)
                  if isinstance(settings.config, StateConfig) else
                  StateConfig(epochs=min(settings.epochs or PAPER_EPOCHS, PAPER_EPOCHS), seed=settings.seed,
                              removed=removed))
        summary = train_state_ranker(task, work_dir, config, settings.top_k, progress=settings.verbose > 0)
        challenges = summary.get(f"{DEV_CHALLENGES}_per_response_accuracy")
        note = (f"best epoch {summary['best_epoch']}/{config.epochs} on {summary['chosen_on']} "
                f"({summary['dev_per_response_accuracy']}%" + (f", {challenges}%" if challenges is not None else "") +
                f"), {summary['templates']} templates, slot types learned: "
                f"{', '.join(summary['slot_types'])}" + (f"; without {', '.join(removed)}" if removed else ""))
        return Fitted(ExportedRanker(Path(work_dir)), note, summary)

    return fit


register("state_ranker", PAPER, "State ranker (ours)", config=StateConfig)(_state_ranker())
for _group in FEATURE_GROUPS:
    register(f"state_ranker-no_{_group}", PAPER, f"State ranker without {_group}",
             config=StateConfig)(_state_ranker((_group,)))
