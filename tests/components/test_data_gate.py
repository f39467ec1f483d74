"""The data gate: anomalies and answers outside the candidates stop the run, and the drift measure is bounded."""

from __future__ import annotations

from collections import Counter

import pytest

from components.data_gate import blocking_problems, js_divergence


def test_js_divergence_bounds() -> None:
    same = Counter({"a": 2, "b": 1})
    assert js_divergence(same, same) == pytest.approx(0.0)
    assert js_divergence(Counter({"a": 1}), Counter({"b": 1})) == pytest.approx(1.0)


def test_gate_blocks_on_anomalies_and_answers_outside_candidates() -> None:
    report = {"anomalies": {"train": [], "test": ["answer_index: out of range"]},
              "answers_not_in_candidates": {"train": 2, "test": 0}}
    problems = blocking_problems(report, ["train", "eval", "test"])
    assert problems == ["split test: answer_index: out of range",
                        "split train: 2 gold answers are not in the candidate set"]
    assert blocking_problems(report, ["eval"]) == []
