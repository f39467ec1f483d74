"""TFMA metrics of the dialog tasks: per-response accuracy, hits@k and per-dialog accuracy.

The model's prediction is its top-k candidate ``indices`` (the ``serving_examples`` output), the label the gold
answer's ``answer_index``. Per-dialog accuracy groups the turns of a slice by the ``dialog_id`` feature: a dialog
counts as right when every one of its bot turns is. Values are fractions in [0, 1], as TFMA metrics are.

Referenced from the EvalConfig as ``MetricConfig(class_name=..., module="components.dialog_metrics")``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
import numpy as np
from tensorflow_model_analysis.metrics import metric_types, metric_util

DIALOG_ID = "dialog_id"


@dataclass
class _Accumulator:
    turns: int = 0
    hits: int = 0
    dialogs: dict[bytes, bool] = field(default_factory=dict)


class _RankingCombiner(beam.CombineFn):
    """Counts turns whose gold answer is among the top ``k`` predictions; per dialog when ``per_dialog``."""

    def __init__(self, key: metric_types.MetricKey, k: int, per_dialog: bool, eval_config: Any = None) -> None:
        self._key, self._k, self._per_dialog, self._eval_config = key, k, per_dialog, eval_config

    def create_accumulator(self) -> _Accumulator:
        return _Accumulator()

    def add_input(self, accumulator: _Accumulator, element: metric_types.StandardMetricInputs) -> _Accumulator:
        # The ModelSpec's label_key / prediction_key pick ``answer_index`` and ``indices``.
        label, predicted, _ = next(metric_util.to_label_prediction_example_weight(
            element, eval_config=self._eval_config, model_name=self._key.model_name,
            output_name=self._key.output_name, flatten=False, allow_none=True))
        label, predicted = np.asarray(label).reshape(-1), np.asarray(predicted).reshape(-1)
        hit = label.size == 1 and bool(np.isin(label[0], predicted[: self._k]))
        accumulator.turns += 1
        accumulator.hits += int(hit)
        if self._per_dialog:
            dialog = np.asarray(element.get_features()[DIALOG_ID]).reshape(-1)[0]
            accumulator.dialogs[dialog] = accumulator.dialogs.get(dialog, True) and hit
        return accumulator

    def merge_accumulators(self, accumulators: Iterable[_Accumulator]) -> _Accumulator:
        merged = _Accumulator()
        for accumulator in accumulators:
            merged.turns += accumulator.turns
            merged.hits += accumulator.hits
            for dialog, right in accumulator.dialogs.items():
                merged.dialogs[dialog] = merged.dialogs.get(dialog, True) and right
        return merged

    def extract_output(self, accumulator: _Accumulator) -> dict[metric_types.MetricKey, float]:
        if self._per_dialog:
            value = sum(accumulator.dialogs.values()) / len(accumulator.dialogs) if accumulator.dialogs else np.nan
        else:
            value = accumulator.hits / accumulator.turns if accumulator.turns else np.nan
        return {self._key: float(value)}


def _computations(name: str = "", k: int = 1, per_dialog: bool = False, eval_config: Any = None,
                  model_names: list[str] | None = None, output_names: list[str] | None = None,
                  example_weighted: bool = False) -> metric_types.MetricComputations:
    """TFMA passes only the arguments this signature names (eval_config, model_names, ...)."""
    preprocessors = [metric_types.FeaturePreprocessor(feature_keys=[DIALOG_ID])] if per_dialog else None
    computations = []
    for model_name in model_names or [""]:
        for output_name in output_names or [""]:
            key = metric_types.MetricKey(name=name, model_name=model_name, output_name=output_name,
                                         example_weighted=example_weighted)
            computations.append(metric_types.MetricComputation(
                keys=[key], preprocessors=preprocessors, combiner=_RankingCombiner(key, k, per_dialog, eval_config)))
    return computations


class PerResponseAccuracy(metric_types.Metric):
    """Fraction of bot turns whose gold answer is ranked first among all candidates."""

    def __init__(self, name: str = "per_response_accuracy") -> None:
        super().__init__(_computations, name=name, k=1, per_dialog=False)


class HitsAtK(metric_types.Metric):
    """Fraction of bot turns whose gold answer is among the top ``k`` (at most the model's top-k output)."""

    def __init__(self, k: int = 10, name: str = "") -> None:
        super().__init__(_computations, name=name or f"hits_at_{k}", k=k, per_dialog=False)


class PerDialogAccuracy(metric_types.Metric):
    """Fraction of dialogs (by ``dialog_id``) whose every bot turn is right."""

    def __init__(self, name: str = "per_dialog_accuracy") -> None:
        super().__init__(_computations, name=name, k=1, per_dialog=True)


for _metric in (PerResponseAccuracy, HitsAtK, PerDialogAccuracy):
    metric_types.register_metric(_metric)
