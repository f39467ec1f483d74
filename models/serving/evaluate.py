"""Evaluate an exported model on a split: per-response and per-dialog accuracy through its serving signature."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from models.examples import TurnExample
from models.methods import Ranker
from models.metrics import accuracy_report, hits_at_k


def evaluate(ranker: Ranker, examples: Sequence[TurnExample], report_path: str | Path | None = None) -> dict[str, Any]:
    """Per-response and per-dialog accuracy, and hits@10 (the gold answer among the model's top 10)."""
    ranked = ranker.rank(examples, 10)
    predictions = [row[0] for row in ranked]
    result = {**accuracy_report(examples, predictions), "hits_at_10": hits_at_k(examples, ranked, 10)}
    if report_path is not None:
        mistakes = [{"dialog_id": e.dialog_id, "turn": e.turn, "query": e.query, "answer": e.answer,
                     "predicted": p} for e, p in zip(examples, predictions, strict=True) if p != e.answer]
        write_text_atomic(report_path, "".join(json.dumps(m) + "\n" for m in mistakes))
    return result
