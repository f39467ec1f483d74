"""TFMA metrics of the dialog tasks: per-response accuracy, hits@k and per-dialog accuracy.

The model's prediction is its top-k candidate ``indices`` (the ``serving_examples`` output), the label the gold
answer's ``answer_index`` (or, for Movie Dialog, ``answer_indices``: every right answer, any of which counts).
Per-dialog accuracy groups the turns of a slice by the ``dialog_id`` feature: a dialog counts as right when every
one of its bot turns is. Values are fractions in [0, 1], as TFMA metrics are.

Referenced from the EvalConfig as ``MetricConfig(class_name="DialogRankingMetrics",
module="components.dialog_metrics", config='{"ks": [2, 10]}')``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
import numpy as np
from tensorflow_model_analysis.metrics import metric_types

DIALOG_ID = "dialog_id"
DEFAULT_PREDICTION_KEY = "indices"


@dataclass
class _Accumulator:
    turns: int = 0
    hits: dict[int, int] = field(default_factory=dict)  # k -> turns whose answer is in the top k
    dialogs: dict[bytes, bool] = field(default_factory=dict)  # dialog id -> every turn right so far


class _RankingCombiner(beam.CombineFn):
    """One pass over the turns of a slice for every metric: hits@k for each k (k = 1 is per-response accuracy)
    and, by ``dialog_id``, per-dialog accuracy. One combiner instead of one per metric keeps TFMA's per-example
    Python work to one call per slice."""

    def __init__(self, keys: dict[str, metric_types.MetricKey], ks: tuple[int, ...], eval_config: Any = None) -> None:
        self._keys, self._ks = keys, ks
        self._model_name = next(iter(keys.values())).model_name or None
        self._output_name = next(iter(keys.values())).output_name or None
        self._prediction_key = prediction_key(eval_config, self._model_name or "")

    def create_accumulator(self) -> _Accumulator:
        return _Accumulator()

    def add_input(self, accumulator: _Accumulator, element: metric_types.StandardMetricInputs) -> _Accumulator:
        # Read directly rather than through metric_util.to_label_prediction_example_weight, which costs more
        # than the rest of the evaluation per example. An element is one turn (TFMA's unbatched extract) or the
        # turns of a batch that share their slices (components.dialog_extractors' groups): the ranks of all its
        # turns are computed on arrays at once. The label is the ModelSpec's label_key feature.
        predicted = element.get_predictions(self._model_name, self._output_name)
        if isinstance(predicted, Mapping):
            predicted = predicted[self._prediction_key]
        predicted = np.asarray(predicted)
        labels, dialogs = element.get_labels(self._model_name, self._output_name), element.get_features()[DIALOG_ID]
        if predicted.ndim == 1:  # one turn
            predicted, labels, dialogs = predicted[np.newaxis], [np.ravel(labels)], np.ravel(dialogs)[:1]
        rank = best_ranks(labels, predicted)
        accumulator.turns += len(rank)
        hits = accumulator.hits
        for k in self._ks:
            hits[k] = hits.get(k, 0) + int(np.count_nonzero(rank < k))
        ids, turn_dialog = np.unique(np.ravel(dialogs), return_inverse=True)
        wrong = np.zeros(len(ids), bool)
        np.logical_or.at(wrong, turn_dialog, rank != 0)
        for dialog, missed in zip(ids.tolist(), wrong.tolist(), strict=True):
            accumulator.dialogs[dialog] = accumulator.dialogs.get(dialog, True) and not missed
        return accumulator

    def merge_accumulators(self, accumulators: Iterable[_Accumulator]) -> _Accumulator:
        merged = _Accumulator()
        for accumulator in accumulators:
            merged.turns += accumulator.turns
            for k, hits in accumulator.hits.items():
                merged.hits[k] = merged.hits.get(k, 0) + hits
            for dialog, right in accumulator.dialogs.items():
                merged.dialogs[dialog] = merged.dialogs.get(dialog, True) and right
        return merged

    def extract_output(self, accumulator: _Accumulator) -> dict[metric_types.MetricKey, float]:
        def share(part: float, whole: int) -> float:
            return float(part / whole) if whole else float("nan")

        values = {TURNS: float(accumulator.turns), PER_RESPONSE: share(accumulator.hits.get(1, 0), accumulator.turns),
                  PER_DIALOG: share(sum(accumulator.dialogs.values()), len(accumulator.dialogs))}
        values.update({hits_name(k): share(accumulator.hits.get(k, 0), accumulator.turns) for k in self._ks})
        return {key: values[name] for name, key in self._keys.items()}


def prediction_key(eval_config: Any, model_name: str) -> str:
    """The ModelSpec's prediction_key for ``model_name`` (TFMA names specs only when there are several)."""
    specs = list(eval_config.model_specs) if eval_config is not None else []
    for spec in specs:
        if (spec.name if len(specs) > 1 else "") == model_name and spec.prediction_key:
            return spec.prediction_key
    return DEFAULT_PREDICTION_KEY


UNRANKED = np.iinfo(np.int64).max  # the rank of a turn none of whose right answers is in the top k


def best_ranks(labels: Any, predicted: np.ndarray) -> np.ndarray:
    """[n] the rank in ``predicted`` [n, k] (candidate indices, best first) of each turn's best-ranked right answer,
    :data:`UNRANKED` when none is ranked. ``labels``: [n, L] right answers per turn, or n rows of any lengths (a
    Movie Dialog exchange has any number of right answers, or none): any right answer counts."""
    rows = [np.ravel(row) for row in labels] if not isinstance(labels, np.ndarray) or labels.dtype == object else None
    if rows is not None:  # ragged: padded with -1, never a candidate index
        width = max((len(row) for row in rows), default=0)
        padded = np.full((len(rows), width), -1, np.int64)
        for i, row in enumerate(rows):
            padded[i, :len(row)] = row
        labels = padded
    labels = np.asarray(labels).reshape(len(predicted), -1)
    hit = (predicted[:, :, np.newaxis] == labels[:, np.newaxis, :]).any(axis=2)  # [n, k]
    return np.where(hit.any(axis=1), hit.argmax(axis=1), UNRANKED)

PER_RESPONSE = "per_response_accuracy"
PER_DIALOG = "per_dialog_accuracy"
TURNS = "turns"  # the slice's example count, counted here to spare TFMA a second per-example combiner


def hits_name(k: int) -> str:
    return f"hits_at_{k}"


def _computations(name: str = PER_RESPONSE, ks: tuple[int, ...] = (2, 10), eval_config: Any = None,
                  model_names: list[str] | None = None, output_names: list[str] | None = None,
                  example_weighted: bool = False) -> metric_types.MetricComputations:
    """TFMA passes only the arguments this signature names (eval_config, model_names, ...)."""
    ks = tuple(sorted({1, *ks}))
    computations = []
    for model_name in model_names or [""]:
        for output_name in output_names or [""]:
            names = [name, PER_DIALOG, TURNS, *(hits_name(k) for k in ks if k != 1)]
            keys = {metric: metric_types.MetricKey(name=metric, model_name=model_name, output_name=output_name,
                                                   example_weighted=example_weighted) for metric in names}
            keys[PER_RESPONSE] = keys.pop(name)
            computations.append(metric_types.MetricComputation(
                keys=list(keys.values()), preprocessors=[metric_types.FeaturePreprocessor(feature_keys=[DIALOG_ID])],
                combiner=_RankingCombiner(keys, ks, eval_config)))
    return computations


class DialogRankingMetrics(metric_types.Metric):
    """Per-response accuracy (the metric's own name, so thresholds apply to it), per-dialog accuracy (turns
    grouped by ``dialog_id``) and hits@k for each k in ``ks`` (at most the model's top-k output)."""

    def __init__(self, name: str = PER_RESPONSE, ks: tuple[int, ...] = (2, 10)) -> None:
        super().__init__(_computations, name=name, ks=list(ks))


metric_types.register_metric(DialogRankingMetrics)
