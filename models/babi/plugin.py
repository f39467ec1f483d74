"""Bordes et al.'s dialog bAbI (tasks 1-5 simulated, task 6 converted from DSTC2), as a paper of the registry
(``models.papers``): its tasks, ``dialog train``'s models, Table 2, and the pipeline's profiles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.layout import TASK_NAMES
from models import papers, turn_papers
from models.methods import Settings

# `dialog train --model`: each name's registered method (hcn trains the template ranker with HCN's settings).
TRAIN_MODELS = {"memn2n": "memn2n", "embeddings": "embeddings", "template": "template_memn2n",
                "hcn": "template_memn2n"}


@dataclass(frozen=True)
class Babi(turn_papers.TurnPaper):
    name: str = "babi"
    title: str = "dialog bAbI (Bordes et al.)"
    pipeline: str = papers.TURNS
    tasks: Mapping[int, str] = field(default_factory=lambda: {t: TASK_NAMES[t] for t in range(1, 7)})
    methods_module: str = "models.babi.methods"
    train_models: Mapping[str, str] = field(default_factory=lambda: TRAIN_MODELS)
    train_help: str = ("memn2n (appendix A), embeddings (supervised embeddings, 4.3), template (the template "
                       "ranker: a MemN2N over delexicalised answers and a learned filler, one SavedModel), hcn "
                       "(Hybrid Code Networks: the template ranker with an LSTM over the utterances, three seeds "
                       "averaged, and its action mask; task 6's product model).")
    schema: str | None = None
    profiles_module: str = "models.babi.profiles"
    challenges: bool = False
    table_flags: frozenset[str] = frozenset({"seeds", "folds", "jobs"})

    def task_label(self, task: int) -> str:
        """babi-1 .. babi-5 for the simulated tasks, dstc2 for task 6."""
        return "dstc2" if task == 6 else f"babi-{task}"

    def train(self, corpus: Path, task: int | None, model: str, out: str, options: Mapping[str, Any],
              settings: Settings) -> dict[str, Any]:
        """Table 9's (MemN2N) or Table 8's (embeddings) settings for the task with ``--preset paper``, the shared
        defaults with ``none``; the options given replace them."""
        from models.babi.presets import HCN_PRODUCT, paper_config
        from models.training import train_config

        options = {"match_type": False, "seed": 0, **options}
        preset = options.pop("preset", "paper")
        if model == "hcn":  # the template ranker's config and method, as the pipeline trains task 6's model
            model, options = "template", {**HCN_PRODUCT, **options}
        config = paper_config(task, model=model, **options) if preset == "paper" else train_config(model, **options)
        return turn_papers.fit_turns(corpus, task, TRAIN_MODELS[model], self.name, out, settings, config)

    def tables(self, request: papers.TableRequest) -> list[Path]:
        """Table 2 (the paper's methods when none is named)."""
        from models.babi import reproduce
        from models.jobs import cores

        return reproduce.benchmark(request.data, request.out, request.methods or reproduce.PAPER_METHODS,
                                   request.tasks, request.epochs, request.progress,
                                   reproduce.DEFAULT_FOLDS if request.folds is None else request.folds,
                                   request.seeds or 1, cores() if request.jobs is None else request.jobs)


PAPER = papers.register(Babi())
