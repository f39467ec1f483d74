"""TFMA extractors of the dialog Evaluators: TFMA's default chain, with changes that change no metric.

The Evaluators read ``custom_extractors`` from this module (``Evaluator(module_path=...)``, TFX's hook for it). A
profile of `make run`'s three Evaluators (py-spy) found three costs that the metrics do not need:

- **Unbatching every feature.** TFMA splits each batch into one dict per turn over every feature it decoded,
  ``memory`` and ``memory_speaker`` (a list of strings per turn) among them, all in Python. After the
  predictions, only the features the eval config slices by and the metrics' ``dialog_id`` are read, so the
  others are dropped before the split; so are the model's outputs other than the metrics' prediction key (the
  ranked responses as strings, the attention), where the metrics are this project's alone.
- **Slice keys per turn.** TFMA works out each turn's slice keys anew (``np.unique`` per feature and slicing spec,
  for each of the template ranker's 143k turns), though they depend only on the few values of the sliced features.
  They are computed by TFMA's own code once per distinct combination of those values, then reused.
- **One extract per turn.** TFMA splits every batch into one extract per turn, each then keyed, fanned out to its
  slices and added to a combiner in Python (most of the Evaluator's time after the model's). The turns of a batch
  that share the sliced features' values share their slice keys, so the batch is split into one extract per such
  group instead (a few per batch: a batch holds consecutive turns of one split and task), and
  ``components.dialog_metrics`` ranks a group's turns on arrays. Only where the metrics are this project's alone
  (no TFMA metric counts extracts as examples) and no confidence interval resamples extracts; otherwise, and for a
  batch whose sliced values are not one per turn, TFMA's per-turn split is used.
- **Large model calls.** TFX reads the examples in large batches, and a Movie Dialog model scores each exchange
  against every candidate (every entity of its world), so a call held several [batch, candidates] arrays at once.
  The batches are sliced to :data:`MAX_TURNS_PER_CALL` turns first (memory, not metrics), after sorting each by
  memory length: a call pads its turns to the longest memory among them (time, not metrics).
- **A failed call per batch.** TFMA calls ``serving_examples`` with the serialized examples as a positional
  argument; a loaded signature binds arguments only by name, so TensorFlow first formats an error message that
  holds the repr of the whole batch, then falls back to the flat signature. Given the examples as a
  feature named like the signature's input, TFMA calls it by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis import constants
from tensorflow_model_analysis.api import types
from tensorflow_model_analysis.extractors import predictions_extractor, slice_key_extractor, unbatch_extractor
from tensorflow_model_analysis.slicer import slicer_lib
from tensorflow_model_analysis.utils import util

from components.dialog_metrics import DIALOG_ID, DialogRankingMetrics, prediction_key

# The features the metrics read after the predictions (the per-dialog accuracy's); the slicing ones are added.
METRIC_FEATURES = (DIALOG_ID,)
# ``serving_examples``' input (models/serving/export.py), and the feature of a turn's history there.
EXAMPLES_INPUT = "examples"
MEMORY_FEATURE = "memory"
# Distinct combinations of sliced values whose slice keys are kept (task x split x challenge: a few dozen).
SLICE_KEY_CACHE = 10_000
# The most turns one model call ranks. TFX reads the examples in large batches, and a Movie Dialog model scores
# each exchange against every one of its candidates before taking its top k: a whole batch at once held several
# [batch, candidates] arrays (docs/results.md has the peak memory with and without).
MAX_TURNS_PER_CALL = 128


def _with_examples_feature(extracts: tfma.Extracts) -> tfma.Extracts:
    features = dict(extracts[tfma.FEATURES_KEY])
    features[EXAMPLES_INPUT] = np.asarray(extracts[tfma.INPUT_KEY]).reshape(-1)
    return {**extracts, tfma.FEATURES_KEY: features}


def sliced_features(eval_config: tfma.EvalConfig) -> tuple[str, ...]:
    """Every feature a slicing spec of ``eval_config`` reads (keys and values, cross slices included)."""
    specs = [*eval_config.slicing_specs, *(spec for cross in eval_config.cross_slicing_specs
                                          for spec in (cross.baseline_spec, *cross.slicing_specs))]
    if any(spec.slice_keys_sql for spec in specs):
        raise ValueError("SQL slicing specs read features this module cannot list: use TFMA's default extractors")
    return tuple(sorted({name for spec in specs for name in (*spec.feature_keys, *spec.feature_values)}))


def _kept_outputs(outputs: Any, key: str) -> Any:
    """One model's outputs reduced to ``key`` (a dict of outputs; a model of one output is left as it is)."""
    return {key: outputs[key]} if isinstance(outputs, Mapping) and key in outputs else outputs


def _with_kept_features(extracts: tfma.Extracts, kept: Iterable[str],
                        predictions: Mapping[str, str] | None = None) -> tfma.Extracts:
    """``kept`` features only and, given ``predictions`` (model name -> the metrics' output; "" for a single model,
    whose outputs TFMA stores without its name), only those outputs."""
    features = extracts[tfma.FEATURES_KEY]
    out = {**extracts, tfma.FEATURES_KEY: {name: features[name] for name in kept if name in features}}
    predicted = extracts.get(tfma.PREDICTIONS_KEY)
    if predictions and isinstance(predicted, Mapping):
        out[tfma.PREDICTIONS_KEY] = (_kept_outputs(predicted, predictions[""]) if "" in predictions else
                                     {name: _kept_outputs(value, predictions[name]) if name in predictions else value
                                      for name, value in predicted.items()})
    return out


def _by_memory_length(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch's turns in order of memory length (stable; as read when it has no ``memory``): a model call pads
    its turns to the longest memory among them, and in a dialog's order a call holds its first turns beside its
    last. The metrics add turns up whatever their order."""
    if MEMORY_FEATURE not in batch.schema.names:
        return batch
    lengths = pc.fill_null(pc.list_value_length(batch.column(MEMORY_FEATURE)), 0).to_numpy(zero_copy_only=False)
    return batch.take(pa.array(np.argsort(lengths, kind="stable")))


def _split_record_batch(extracts: tfma.Extracts, rows: int) -> list[tfma.Extracts]:
    """The batch read from the examples as batches of at most ``rows`` turns of near equal memory length."""
    batch = extracts.get(constants.ARROW_RECORD_BATCH_KEY)
    if batch is None or batch.num_rows <= rows or set(extracts) != {constants.ARROW_RECORD_BATCH_KEY}:
        return [extracts]
    batch = _by_memory_length(batch)
    return [{constants.ARROW_RECORD_BATCH_KEY: batch.slice(start, rows)} for start in range(0, batch.num_rows, rows)]


def split_batches_extractor(rows: int = MAX_TURNS_PER_CALL) -> tfma.extractors.Extractor:
    """The examples in batches of at most ``rows`` turns from the start of the chain, so that a model call ranks
    at most that many (:data:`MAX_TURNS_PER_CALL`)."""
    return tfma.extractors.Extractor(stage_name="SplitBatchesForTheModel",
                                     ptransform=beam.FlatMap(_split_record_batch, rows=rows))


def examples_feature_extractor() -> tfma.extractors.Extractor:
    """The serialized examples as the feature ``examples``, so TFMA calls ``serving_examples`` by name."""
    return tfma.extractors.Extractor(stage_name="ExtractExamplesFeature",
                                     ptransform=beam.Map(_with_examples_feature))


def kept_features_extractor(kept: Iterable[str], predictions: Mapping[str, str] | None = None
                            ) -> tfma.extractors.Extractor:
    """Only the ``kept`` features from here on (the predictions and labels are extracted already) and, given each
    model's output the metrics read (``predictions``), only that output: the others (a Movie Dialog model's ranked
    responses as strings, the attention) would be split and carried to the metrics for nothing."""
    return tfma.extractors.Extractor(stage_name="KeepSliceAndMetricFeatures",
                                     ptransform=beam.Map(_with_kept_features, kept=tuple(kept),
                                                         predictions=dict(predictions or {})))


def metric_outputs(eval_config: tfma.EvalConfig) -> dict[str, str]:
    """Each model's output the metrics read (its spec's prediction key), by model name ("" for a single model):
    the candidate's and, once a model is blessed, the baseline's the TFX Evaluator adds beside it."""
    specs = list(eval_config.model_specs)
    names = [spec.name for spec in specs] if len(specs) > 1 else [""] * len(specs)
    return {name: prediction_key(eval_config, name) for name in names}


class _NotGroupable(Exception):
    """A batched value that is not one row per turn: the batch is split per turn, as TFMA does."""


def _rows(value: Any, size: int) -> Any:
    """``value`` (a batched extract's leaf or dict of them) as arrays with one row per turn."""
    if isinstance(value, Mapping):
        return {key: _rows(inner, size) for key, inner in value.items()}
    if value is None:
        return None
    if isinstance(value, types.VarLenTensorValue | types.SparseTensorValue):
        rows = np.empty(size, dtype=object)  # one array per turn, of any length (a Movie Dialog label)
        for i, turn in enumerate(util.split_extracts({"value": value})):
            rows[i] = turn["value"]
        return rows
    if isinstance(value, np.ndarray) and value.ndim and value.shape[0] == size:
        return value
    raise _NotGroupable(type(value).__name__)


def _take(value: Any, rows: np.ndarray) -> Any:
    if isinstance(value, Mapping):
        return {key: _take(inner, rows) for key, inner in value.items()}
    return None if value is None else value[rows]


def _slice_groups(batched: tfma.Extracts, sliced: tuple[str, ...]) -> list[tfma.Extracts]:
    """One extract per group of the batch's turns with equal values of the ``sliced`` features: those features
    hold the group's value as one turn's extract does, every other array the group's rows."""
    extracts = {key: value for key, value in batched.items() if key != constants.ARROW_RECORD_BATCH_KEY}
    labels = extracts[tfma.LABELS_KEY]
    size = int(labels.dense_shape[0]) if isinstance(labels, types.VarLenTensorValue | types.SparseTensorValue) \
        else len(labels)
    extracts = _rows(extracts, size)
    features = extracts[tfma.FEATURES_KEY]
    group = np.zeros(size, np.int64)
    for name in sliced:
        if name not in features:
            continue
        column = features[name]
        if column.shape != (size, 1):  # not one value per turn
            raise _NotGroupable(name)
        _, codes = np.unique(column[:, 0], return_inverse=True)
        _, group = np.unique(group * size + codes, return_inverse=True)
    _, first, group = np.unique(group, return_index=True, return_inverse=True)
    out = []
    for g, row in enumerate(first.tolist()):
        rows = np.flatnonzero(group == g)
        extract = _take({key: value for key, value in extracts.items() if key != tfma.FEATURES_KEY}, rows)
        extract[tfma.FEATURES_KEY] = {name: value[row] if name in sliced else value[rows]
                                      for name, value in features.items()}
        out.append(extract)
    return out


def _split_batch(batched: tfma.Extracts, sliced: tuple[str, ...]) -> list[tfma.Extracts]:
    try:
        return _slice_groups(batched, sliced)
    except _NotGroupable:
        return unbatch_extractor._extract_unbatched_inputs(batched)


def groups_its_turns(eval_config: tfma.EvalConfig) -> bool:
    """Whether the Evaluator may hand the metrics groups of turns: every metric is :class:`DialogRankingMetrics`
    (which counts turns, not extracts), nothing resamples or counts extracts (confidence intervals, a minimum
    slice size) and no example weights."""
    metrics = [metric for spec in eval_config.metrics_specs for metric in spec.metrics]
    return (bool(metrics) and all(metric.class_name == DialogRankingMetrics.__name__ for metric in metrics)
            and not any(spec.example_weights.weighted or spec.binarize.ByteSize() or spec.aggregate.ByteSize()
                        for spec in eval_config.metrics_specs)
            and not eval_config.options.compute_confidence_intervals.value
            and eval_config.options.min_slice_size.value <= 1
            and not any(spec.example_weight_key or spec.example_weight_keys for spec in eval_config.model_specs))


def slice_group_extractor(eval_config: tfma.EvalConfig) -> tfma.extractors.Extractor:
    """TFMA's unbatch stage (same name) giving one extract per group of a batch's turns that share their slices
    (:func:`_slice_groups`)."""
    return tfma.extractors.Extractor(
        stage_name=unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME,
        ptransform=beam.FlatMap(_split_batch, sliced=sliced_features(eval_config)))


class MemoizedSliceKeysFn(slice_key_extractor.ExtractSliceKeysFn):
    """TFMA's ``ExtractSliceKeysFn``, run once per distinct combination of the ``columns``' values: a turn whose
    sliced values were seen before gets the slice keys TFMA computed for them (the same array object, which
    nothing downstream changes). Turns it cannot key (a feature that is not a plain array, transformed features,
    keys already set by SQL slicing) go through TFMA's code unchanged."""

    def __init__(self, eval_config: tfma.EvalConfig, materialize: bool, columns: tuple[str, ...]) -> None:
        super().__init__(eval_config, materialize)
        self._columns = columns
        self._cache: dict[tuple, dict[str, Any]] = {}

    def _key(self, element: tfma.Extracts) -> tuple | None:
        if element.get(constants.TRANSFORMED_FEATURES_KEY) is not None or constants.SLICE_KEY_TYPES_KEY in element:
            return None
        features = element[tfma.FEATURES_KEY]
        values = [features.get(column) for column in self._columns]
        if not all(value is None or isinstance(value, np.ndarray) for value in values):
            return None
        return tuple(None if value is None else (value.dtype.str, tuple(value.ravel().tolist())) for value in values)

    def process(self, element: tfma.Extracts, slice_spec: list[slicer_lib.SingleSliceSpec]) -> list[tfma.Extracts]:
        key = self._key(element)
        keys = self._cache.get(key) if key is not None else None
        if keys is not None:
            return [{**element, **keys}]
        result = super().process(element, slice_spec)
        if key is not None and len(self._cache) < SLICE_KEY_CACHE:
            outputs = (constants.SLICE_KEY_TYPES_KEY, constants.SLICE_KEYS_KEY)
            self._cache[key] = {name: result[0][name] for name in outputs if name in result[0]}
        return result


def memoized_slice_key_extractor(eval_config: tfma.EvalConfig, materialize: bool = False
                                 ) -> tfma.extractors.Extractor:
    """TFMA's slice key stage (same name, same slicing specs, same output) over :class:`MemoizedSliceKeysFn`."""
    if eval_config.cross_slicing_specs:
        raise ValueError("cross slicing specs: use TFMA's default extractors")
    slice_spec = [slicer_lib.SingleSliceSpec(spec=spec) for spec in eval_config.slicing_specs] or [
        slicer_lib.SingleSliceSpec()]
    return tfma.extractors.Extractor(
        stage_name=slice_key_extractor.SLICE_KEY_EXTRACTOR_STAGE_NAME,
        ptransform=beam.ParDo(MemoizedSliceKeysFn(eval_config, materialize, sliced_features(eval_config)),
                              slice_spec=slice_spec))


def custom_extractors(eval_shared_model: Any, eval_config: tfma.EvalConfig,
                      tensor_adapter_config: Any = None) -> list[tfma.extractors.Extractor]:
    """TFMA's default extractors, after :func:`split_batches_extractor`, with :func:`examples_feature_extractor`
    before the predictions,
    :func:`kept_features_extractor` before the unbatching and, where :func:`groups_its_turns`, the metrics' outputs
    alone and :func:`slice_group_extractor` for the unbatching, and :func:`memoized_slice_key_extractor` for TFMA's
    slice key stage (the signature the TFX Evaluator calls)."""
    chain = [split_batches_extractor()]
    for extractor in tfma.default_extractors(eval_shared_model=eval_shared_model, eval_config=eval_config,
                                             tensor_adapter_config=tensor_adapter_config):
        if extractor.stage_name == predictions_extractor.PREDICTIONS_EXTRACTOR_STAGE_NAME:
            chain.append(examples_feature_extractor())
        if extractor.stage_name == unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME:
            ours = groups_its_turns(eval_config)  # then no metric reads another output
            chain.append(kept_features_extractor((*sliced_features(eval_config), *METRIC_FEATURES),
                                                 metric_outputs(eval_config) if ours else None))
            if ours:
                extractor = slice_group_extractor(eval_config)
        if extractor.stage_name == slice_key_extractor.SLICE_KEY_EXTRACTOR_STAGE_NAME:
            extractor = memoized_slice_key_extractor(eval_config)
        chain.append(extractor)
    stages = [extractor.stage_name for extractor in chain]
    if not {"ExtractExamplesFeature", "KeepSliceAndMetricFeatures",
            slice_key_extractor.SLICE_KEY_EXTRACTOR_STAGE_NAME} <= set(stages):
        raise ValueError(f"TFMA's default extractors changed: no predictions, unbatch or slice key stage in {stages}")
    return chain
