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
from models.serving.ranker import read_spec


def answers_outside(model_directory: str | Path, examples: Sequence[TurnExample]) -> tuple[int, int]:
    """How many examples' gold answers are not among the model's candidates (its feature spec), and how many
    candidates it has: a model of another corpus scores those turns 0 and cannot do otherwise. (0, 0) when the
    spec lists no candidates (a template ranker fills its own answers). A damaged or missing spec is a
    :class:`~models.serving.ranker.ModelError` naming the file."""
    candidates = set((read_spec(model_directory) or {}).get("candidates", []))
    if not candidates:
        return 0, 0
    return sum(e.answer not in candidates for e in examples), len(candidates)


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
