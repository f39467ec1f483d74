"""The echo paper as the registry wants it (``models.papers.Paper``)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models import papers, turn_papers
from models.methods import Settings
from tests.fourth_paper.corpus import NAME, TASK

# Its curated schema: the pipeline's, with its task's label ("echo") added; the test writes it and sets this.
SCHEMA: Path | None = None


@dataclass(frozen=True)
class EchoProfile:
    name: str
    epochs: int
    max_drop: float = 0.01

    def products(self, tasks: Sequence[int] = ()) -> tuple[papers.Product, ...]:
        from models.training import MemN2NConfig

        config = MemN2NConfig(hops=1, embedding_dim=8, epochs=self.epochs, batch_size=8)
        return (papers.Product("echo", "Echo", "echo_memn2n", config, min_accuracy=0.0),)


@dataclass(frozen=True)
class Echo(turn_papers.TurnPaper):
    name: str = "echo"
    title: str = "echo (a fourth paper)"
    pipeline: str = papers.TURNS
    tasks: Mapping[int, str] = field(default_factory=lambda: {TASK: NAME})
    methods_module: str = "tests.fourth_paper.methods"
    train_models: Mapping[str, str] = field(default_factory=lambda: {"memn2n": "echo_memn2n"})
    train_help: str = "memn2n (the core MemN2N)."
    profiles_module: str = __name__  # its PROFILES below
    challenges: bool = False
    table_flags: frozenset[str] = frozenset()

    @property
    def schema(self) -> str | None:
        return None if SCHEMA is None else str(SCHEMA)

    def task_label(self, task: int) -> str:
        return NAME

    def train(self, corpus: Path, task: int | None, model: str, out: str, options: Mapping[str, Any],
              settings: Settings) -> dict[str, Any]:
        from models.training import train_config

        config = train_config("memn2n", **{"hops": 1, "embedding_dim": 8, "batch_size": 8, **options})
        return turn_papers.fit_turns(corpus, task, self.train_models[model], self.name, out, settings, config)

    def tables(self, request: papers.TableRequest) -> list[Path]:
        """One table: the method's per-response accuracy on tst."""
        from data.layout import discover
        from models import methods
        from models.examples import TaskData
        from models.metrics import accuracy_report

        rows = []
        for task in request.tasks:
            loaded = TaskData.load(discover(request.data)[task])
            with tempfile.TemporaryDirectory() as work:
                fitted = methods.get("echo_memn2n", self.name).fit(loaded, Path(work),
                                                                   Settings(epochs=request.epochs))
                tst = loaded.split("tst")
                accuracy = accuracy_report(tst, methods.best_answers(fitted, tst))["per_response_accuracy"]
            rows.append(f"| {task} | {accuracy} |")
        request.out.write_text("| task | MemN2N tst per-response accuracy |\n| --- | --- |\n" + "\n".join(rows) + "\n")
        return [request.out]


PROFILES = {"quick": EchoProfile("quick", 1), "full": EchoProfile("full", 2)}
PAPER = papers.register(Echo())
