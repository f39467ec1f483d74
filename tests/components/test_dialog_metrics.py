"""The TFMA dialog metrics: per-response, per-dialog and hits@k in one pass."""

from __future__ import annotations

import numpy as np
import pytest
from tensorflow_model_analysis.metrics import metric_types

from components.dialog_metrics import _RankingCombiner


def _inputs(label: int, predicted: list[int], dialog: bytes) -> metric_types.StandardMetricInputs:
    return metric_types.StandardMetricInputs(labels=np.array([label]), predictions=np.array(predicted),
                                             features={"dialog_id": np.array([dialog])})


def test_ranking_metrics_in_one_pass() -> None:
    keys = {name: metric_types.MetricKey(name=name)
            for name in ("per_response_accuracy", "per_dialog_accuracy", "hits_at_2", "turns")}
    combiner = _RankingCombiner(keys, (1, 2))
    turns = [_inputs(3, [3, 1], b"a"), _inputs(5, [5, 2], b"a"), _inputs(1, [0, 1], b"b"), _inputs(2, [0, 1], b"b")]
    left, right = combiner.create_accumulator(), combiner.create_accumulator()
    for turn in turns[:3]:
        left = combiner.add_input(left, turn)
    right = combiner.add_input(right, turns[3])  # dialog b is split across accumulators
    result = combiner.extract_output(combiner.merge_accumulators([left, right]))
    assert {key.name: value for key, value in result.items()} == pytest.approx(
        {"per_response_accuracy": 2 / 4, "per_dialog_accuracy": 1 / 2, "hits_at_2": 3 / 4, "turns": 4})


def test_any_right_answer_counts_at_its_best_rank() -> None:
    """A Movie Dialog label lists every right answer: the best-ranked one decides; none right is a miss."""
    keys = {name: metric_types.MetricKey(name=name) for name in ("per_response_accuracy", "hits_at_2", "turns")}
    combiner = _RankingCombiner(keys, (1, 2))
    turns = [metric_types.StandardMetricInputs(labels=np.array(labels), predictions=np.array([4, 7, 9]),
                                               features={"dialog_id": np.array([b"d"])})
             for labels in ([9, 7], [4, 1], [], [8])]
    accumulator = combiner.create_accumulator()
    for turn in turns:
        accumulator = combiner.add_input(accumulator, turn)
    result = {key.name: value for key, value in combiner.extract_output(accumulator).items()}
    assert result == pytest.approx({"per_response_accuracy": 1 / 4, "hits_at_2": 2 / 4, "turns": 4})
