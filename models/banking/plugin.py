"""Majumdar et al.'s banking self-play (task 7 of the dialog-bAbI layout, with a labels sidecar), as a paper of
the registry (``models.papers``): ``dialog train``'s models, Tables 8-9, and the pipeline's profiles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.layout import BANKING_TASK, TASK_NAMES
from models import papers, turn_papers
from models.methods import Settings

TRAIN_MODELS = {"state_ranker": "state_ranker", "smn": "smn", "mmn": "mmn"}
# `dialog train`'s options each model has: SMN's and MMN's networks are MemN2Ns (Majumdar et al.'s section-5
# settings with --preset paper); the state ranker has its own config (models.banking.state_ranker.StateConfig).
STATE_OPTIONS = ("epochs", "batch_size", "learning_rate", "seed")


@dataclass(frozen=True)
class Banking(turn_papers.TurnPaper):
    name: str = "banking"
    title: str = "banking self-play (Majumdar et al.)"
    pipeline: str = papers.TURNS
    tasks: Mapping[int, str] = field(default_factory=lambda: {BANKING_TASK: TASK_NAMES[BANKING_TASK]})
    methods_module: str = "models.banking.methods"
    train_models: Mapping[str, str] = field(default_factory=lambda: TRAIN_MODELS)
    train_help: str = ("state_ranker (ours), smn (one MemN2N), mmn (a MemN2N per intent and a selector); SMN and "
                       "MMN with Majumdar et al.'s settings under --preset paper.")
    schema: str | None = None
    profiles_module: str = "models.banking.profiles"
    challenges: bool = True
    table_flags: frozenset[str] = frozenset({"seeds", "jobs"})

    def task_label(self, task: int) -> str:
        return "banking"

    def train(self, corpus: Path, task: int | None, model: str, out: str, options: Mapping[str, Any],
              settings: Settings) -> dict[str, Any]:
        options = dict(options)
        preset = options.pop("preset", "paper")
        if model == "state_ranker":
            from models.banking.state_ranker import StateConfig

            unknown = sorted(set(options) - set(STATE_OPTIONS))
            if unknown:
                raise ValueError(f"state_ranker has no setting {', '.join(unknown)}")
            config: Any = StateConfig(**options)
        else:
            from models.banking.networks import paper_config
            from models.training import train_config

            config = paper_config(**options) if preset == "paper" else train_config("memn2n", **options)
        return turn_papers.fit_turns(corpus, task, TRAIN_MODELS[model], self.name, out, settings, config)

    def tables(self, request: papers.TableRequest) -> list[Path]:
        """Tables 8-9 (smn, mmn, the state ranker; the ablations named add columns), to OUT-banking.md when the
        corpus holds other papers' tasks too (their tables take OUT)."""
        from models.banking import reproduce
        from models.jobs import cores

        return reproduce.benchmark(request.data, request.out, request.epochs, request.progress, request.seeds or 1,
                                   request.methods, request.several,
                                   jobs=cores() if request.jobs is None else request.jobs)


PAPER = papers.register(Banking())
