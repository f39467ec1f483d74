"""Per-response and per-dialog accuracy (section 5 of Bordes et al., 2017) and hits@k (Dodge et al.).

Every table, the training loop's dev selection and ``dialog evaluate`` count through these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from models.examples import TurnExample


class Answered(Protocol):
    @property
    def answers(self) -> tuple[str, ...]: ...


def percent(correct: Iterable[bool]) -> float:
    """The share of true values, in percent (0 for none): the unrounded accuracy."""
    values = [bool(c) for c in correct]
    return 100.0 * sum(values) / len(values) if values else 0.0


def accuracy_report(examples: Sequence[TurnExample], predictions: Sequence[str]) -> dict[str, Any]:
    """Per-response accuracy: the gold response ranked first. Per-dialog: every bot turn of the dialog right.

    Percentages, as in the paper's tables.
    """
    if len(examples) != len(predictions):
        raise ValueError(f"{len(examples)} examples but {len(predictions)} predictions")
    correct = [predicted == example.answer for example, predicted in zip(examples, predictions, strict=True)]
    dialog_ok: dict[str, bool] = {}
    for example, right in zip(examples, correct, strict=True):
        dialog_ok[example.dialog_id] = dialog_ok.get(example.dialog_id, True) and right
    return {
        "per_response_accuracy": round(percent(correct), 2),
        "per_dialog_accuracy": round(percent(dialog_ok.values()), 2),
        "turns": len(examples),
        "dialogs": len(dialog_ok),
    }


def hits_at_k(examples: Sequence[Answered], ranked: Sequence[Sequence[str]], k: int) -> float:
    """Percentage of examples with a correct answer among the first ``k`` ranked candidates."""
    return round(percent(bool(set(e.answers) & set(list(r)[:k])) for e, r in zip(examples, ranked, strict=True)), 2)
