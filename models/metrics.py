"""Per-response and per-dialog accuracy (section 5 of Bordes et al., 2017) and hits@k."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from models.examples import TurnExample


def accuracy_report(examples: Sequence[TurnExample], predictions: Sequence[str]) -> dict[str, Any]:
    """Per-response accuracy: the gold response ranked first. Per-dialog: every bot turn of the dialog right.

    Percentages, as in the paper's tables.
    """
    if len(examples) != len(predictions):
        raise ValueError(f"{len(examples)} examples but {len(predictions)} predictions")
    dialog_ok: dict[str, bool] = {}
    right = 0
    for example, predicted in zip(examples, predictions, strict=True):
        correct = predicted == example.answer
        right += correct
        dialog_ok[example.dialog_id] = dialog_ok.get(example.dialog_id, True) and correct
    turns, dialogs = len(examples), len(dialog_ok)
    return {
        "per_response_accuracy": round(100.0 * right / turns, 2) if turns else 0.0,
        "per_dialog_accuracy": round(100.0 * sum(dialog_ok.values()) / dialogs, 2) if dialogs else 0.0,
        "turns": turns,
        "dialogs": dialogs,
    }


def hits_at_k(examples: Sequence[TurnExample], ranked: Sequence[Sequence[str]], k: int) -> float:
    """Percentage of examples whose gold answer is among the first ``k`` ranked candidates."""
    if not examples:
        return 0.0
    return round(100.0 * sum(e.answer in list(r)[:k] for e, r in zip(examples, ranked, strict=True)) / len(examples), 2)
