"""TFMA extractors of the dialog Evaluators: TFMA's default chain, with two stages added that change no metric.

The Evaluators read ``custom_extractors`` from this module (``Evaluator(module_path=...)``, TFX's hook for it). A
profile of `make run`'s three Evaluators (py-spy) found two costs that the metrics do not need:

- **Unbatching every feature.** TFMA splits each batch into one dict per turn over every feature it decoded,
  ``memory`` and ``memory_speaker`` (a list of strings per turn) among them: 13.8 s of Python. After the
  predictions, only the features the eval config slices by and the metrics' ``dialog_id`` are read, so the
  others are dropped before the split.
- **A failed call per batch.** TFMA calls ``serving_examples`` with the serialized examples as a positional
  argument; a loaded signature binds arguments only by name, so TensorFlow first formats an error message that
  holds the repr of the whole batch (6 s), then falls back to the flat signature. Given the examples as a
  feature named like the signature's input, TFMA calls it by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import apache_beam as beam
import numpy as np
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.extractors import predictions_extractor, unbatch_extractor

from components.dialog_metrics import DIALOG_ID

# The features the metrics read after the predictions (the per-dialog accuracy's); the slicing ones are added.
METRIC_FEATURES = (DIALOG_ID,)
# ``serving_examples``' input (models/serving/export.py).
EXAMPLES_INPUT = "examples"


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


def _with_kept_features(extracts: tfma.Extracts, kept: Iterable[str]) -> tfma.Extracts:
    features = extracts[tfma.FEATURES_KEY]
    return {**extracts, tfma.FEATURES_KEY: {name: features[name] for name in kept if name in features}}


def examples_feature_extractor() -> tfma.extractors.Extractor:
    """The serialized examples as the feature ``examples``, so TFMA calls ``serving_examples`` by name."""
    return tfma.extractors.Extractor(stage_name="ExtractExamplesFeature",
                                     ptransform=beam.Map(_with_examples_feature))


def kept_features_extractor(kept: Iterable[str]) -> tfma.extractors.Extractor:
    """Only the ``kept`` features from here on (the predictions and labels are extracted already)."""
    return tfma.extractors.Extractor(stage_name="KeepSliceAndMetricFeatures",
                                     ptransform=beam.Map(_with_kept_features, kept=tuple(kept)))


def custom_extractors(eval_shared_model: Any, eval_config: tfma.EvalConfig,
                      tensor_adapter_config: Any = None) -> list[tfma.extractors.Extractor]:
    """TFMA's default extractors, with :func:`examples_feature_extractor` before the predictions and
    :func:`kept_features_extractor` before the unbatching (the signature the TFX Evaluator calls)."""
    chain = []
    for extractor in tfma.default_extractors(eval_shared_model=eval_shared_model, eval_config=eval_config,
                                             tensor_adapter_config=tensor_adapter_config):
        if extractor.stage_name == predictions_extractor.PREDICTIONS_EXTRACTOR_STAGE_NAME:
            chain.append(examples_feature_extractor())
        if extractor.stage_name == unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME:
            chain.append(kept_features_extractor((*sliced_features(eval_config), *METRIC_FEATURES)))
        chain.append(extractor)
    stages = [extractor.stage_name for extractor in chain]
    if "ExtractExamplesFeature" not in stages or "KeepSliceAndMetricFeatures" not in stages:
        raise ValueError(f"TFMA's default extractors changed: no predictions or unbatch stage in {stages}")
    return chain
