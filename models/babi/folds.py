"""Model selection that does not spend dev: k folds of the training dialogs, grouped by dialog.

On task 6 (DSTC2) dev overstates the held-back test, partly because every variant and epoch is chosen on
dev. Here each method is run ``k`` times: run ``r`` holds out fold ``r`` for the report, chooses its
variant or epoch on fold ``r + 1`` (its "dev"), and trains on the other ``k - 2`` folds. The mean over the held-out
folds, with its spread, is the estimate. A final run chooses on fold 0, trains on the rest of ``trn``, and is the
one model reported on the real dev (and test, when present): dev is used once, for the report, and never to
choose.

The fold runs train on ``(k - 2) / k`` of ``trn`` (the final run on ``(k - 1) / k``), so with few folds the estimate
leans pessimistic; ``k`` trades that against time.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.examples import TaskData

DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class FoldRun:
    """One run: ``task`` has ``trn`` (to train on) and ``dev`` (to choose on), and, for a fold run, ``tst``: the
    held-out fold it is reported on. ``name``: "fold r/k" or "final"."""

    name: str
    task: TaskData


def fold_runs(task: TaskData, folds: int = DEFAULT_FOLDS, seed: int = 0) -> list[FoldRun]:
    """The ``folds`` fold runs, then the final run (see the module docstring); dialogs are dealt to folds at
    random (``seed``), each dialog whole to one fold."""
    dialogs = task.dialogs["trn"]
    if folds < 3:
        raise ValueError(f"{folds} folds: at least 3 are needed (one to report, one to choose on, one to train)")
    if len(dialogs) < folds:
        raise ValueError(f"{task.files.splits['trn']}: {len(dialogs)} dialogs, fewer than the {folds} folds")
    parts = np.array_split(np.random.default_rng(seed).permutation(len(dialogs)), folds)
    fold = [[dialogs[i] for i in sorted(part)] for part in parts]

    def rest(*left_out: int) -> list:
        return [d for f in range(folds) if f not in left_out for d in fold[f]]

    runs = [FoldRun(f"fold {r + 1}/{folds}", task.with_dialogs(
        {"trn": rest(r, (r + 1) % folds), "dev": fold[(r + 1) % folds], "tst": fold[r]})) for r in range(folds)]
    return [*runs, FoldRun("final", task.with_dialogs({"trn": rest(0), "dev": fold[0]}))]


def mean_and_spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value), rounded to 2 decimals."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return round(statistics.fmean(values), 2), round(spread, 2)
