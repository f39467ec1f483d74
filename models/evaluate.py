"""Evaluate an exported model on a split: per-response and per-dialog accuracy through its serving signature."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from models.examples import TurnExample
from models.metrics import accuracy_report, hits_at_k
from models.training import pad_batch


class SavedModelRanker:
    """The exported model, called exactly as a serving client would (raw text in, ranked responses out)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        if not (self.directory / "saved_model.pb").is_file():
            raise FileNotFoundError(f"{self.directory}: no saved_model.pb (expected a model written by dialog train)")
        self.loaded = tf.saved_model.load(str(self.directory))
        self.serve = self.loaded.signatures["serving_speakers"]

    def rank(self, examples: Sequence[TurnExample], batch_size: int = 256) -> dict[str, np.ndarray]:
        outputs: dict[str, list[np.ndarray]] = {}
        for start in range(0, len(examples), batch_size):
            memory, speaker, query = pad_batch(examples[start:start + batch_size])
            result = self.serve(memory=tf.constant(memory, tf.string), memory_speaker=tf.constant(speaker, tf.string),
                                query=tf.constant(query, tf.string))
            for key in ("responses", "scores", "indices"):
                outputs.setdefault(key, []).append(result[key].numpy())
        return {key: np.concatenate(value) for key, value in outputs.items()}

    def predict(self, examples: Sequence[TurnExample]) -> list[str]:
        if not examples:
            return []
        return [row[0].decode("utf-8") for row in self.rank(examples)["responses"]]


def evaluate(ranker: SavedModelRanker, examples: Sequence[TurnExample],
             report_path: str | Path | None = None) -> dict[str, Any]:
    """Per-response and per-dialog accuracy, and hits@10 (the gold answer among the model's top 10)."""
    ranked = [[r.decode("utf-8") for r in row] for row in ranker.rank(examples)["responses"]] if examples else []
    predictions = [row[0] for row in ranked]
    result = {**accuracy_report(examples, predictions), "hits_at_10": hits_at_k(examples, ranked, 10)}
    if report_path is not None:
        mistakes = [{"dialog_id": e.dialog_id, "turn": e.turn, "query": e.query, "answer": e.answer,
                     "predicted": p} for e, p in zip(examples, predictions, strict=True) if p != e.answer]
        Path(report_path).write_text("".join(json.dumps(m) + "\n" for m in mistakes))
    return result
