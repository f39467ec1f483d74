"""The echo paper's one method, registered in the project's registry: the core MemN2N, exported as a SavedModel
(so ``dialog train`` and the pipeline's Trainer both write one)."""

from __future__ import annotations

from pathlib import Path

from models.examples import TaskData
from models.methods import Fitted, Settings, register
from models.serving.ranker import ExportedRanker
from models.training import MemN2NConfig, train

PAPER = "echo"
CONFIG = MemN2NConfig(hops=1, embedding_dim=8, epochs=2, batch_size=8)


@register("echo_memn2n", PAPER, "MemN2N")
def memn2n(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    config = settings.config or MemN2NConfig(hops=1, embedding_dim=8, epochs=settings.epochs or 2, batch_size=8)
    summary = train(task, config, work_dir, settings.verbose, settings.log_dir, settings.top_k)
    return Fitted(ExportedRanker(Path(work_dir)), f"best epoch {summary['best_epoch']}/{config.epochs}", summary)
