"""The Evaluator's extractors: the examples named, only the slicing and metric features kept, memoized slice keys
equal to TFMA's."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from components.dialog_extractors import (
    EXAMPLES_INPUT,
    MemoizedSliceKeysFn,
    _with_examples_feature,
    _with_kept_features,
    sliced_features,
)


def test_extractors_name_the_examples_and_keep_only_the_slicing_and_metric_features() -> None:
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis.utils import model_util

    serialized = np.array([[b"first"], [b"second"]], dtype=object)
    extracts = {tfma.INPUT_KEY: serialized, tfma.LABELS_KEY: np.array([3, 4]), tfma.FEATURES_KEY: {
        "task": np.array([[b"babi-1"], [b"babi-2"]]), "memory": np.array([[b"hi"], [b"hello"]]),
        "dialog_id": np.array([[b"a"], [b"b"]])}}
    named = _with_examples_feature(extracts)
    # TFMA calls a signature by its input's name when the features hold it (else positionally, which a loaded
    # signature refuses only after formatting the batch into an error message).
    inputs = model_util.get_inputs(named[tfma.FEATURES_KEY], {EXAMPLES_INPUT: tf.TensorSpec([None], tf.string)})
    assert isinstance(inputs, dict) and inputs[EXAMPLES_INPUT].numpy().tolist() == [b"first", b"second"]
    kept = _with_kept_features(named, ("task", "split", "dialog_id"))
    assert set(kept[tfma.FEATURES_KEY]) == {"task", "dialog_id"}
    assert kept[tfma.LABELS_KEY] is extracts[tfma.LABELS_KEY] and "memory" in extracts[tfma.FEATURES_KEY]
    # The kept features are those the eval config slices by, whatever they are.
    config = tfma.EvalConfig(
        slicing_specs=[tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=["task", "split"]),
                       tfma.SlicingSpec(feature_values={"challenge": "oov"})],
        cross_slicing_specs=[tfma.CrossSlicingSpec(baseline_spec=tfma.SlicingSpec(feature_keys=["turn"]))])
    assert sliced_features(config) == ("challenge", "split", "task", "turn")


def test_memoized_slice_keys_are_tfmas() -> None:
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis import constants
    from tensorflow_model_analysis.extractors.slice_key_extractor import ExtractSliceKeysFn
    from tensorflow_model_analysis.slicer.slicer_lib import SingleSliceSpec

    config = tfma.EvalConfig(slicing_specs=[tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=["task"]),
                                            tfma.SlicingSpec(feature_keys=["task", "split"]),
                                            tfma.SlicingSpec(feature_values={"split": "dev"})])
    specs = [SingleSliceSpec(spec=spec) for spec in config.slicing_specs]
    turns = [{tfma.FEATURES_KEY: {"task": np.array([task]), "split": np.array([split]), "dialog_id": np.array([d])}}
             for task, split, d in [(b"babi-1", b"dev", b"a"), (b"babi-2", b"dev", b"b"), (b"babi-1", b"dev", b"c"),
                                    (b"babi-1", b"tst", b"d"), (b"babi-2", b"dev", b"e")]]
    turns.append({tfma.FEATURES_KEY: {"split": np.array([b"dev"])}})  # no task: fewer slices
    memoized = MemoizedSliceKeysFn(config, False, sliced_features(config))
    tfmas = ExtractSliceKeysFn(config, False)
    got = [memoized.process(turn, specs)[0] for turn in turns]
    keys = constants.SLICE_KEY_TYPES_KEY
    for turn, mine in zip(turns, got, strict=True):
        (theirs,) = tfmas.process(turn, specs)
        assert sorted(mine[keys].tolist()) == sorted(theirs[keys].tolist())
        assert mine[tfma.FEATURES_KEY] is turn[tfma.FEATURES_KEY] and keys not in turn
    assert got[2][keys] is got[0][keys]  # the same values: computed once
    assert len(memoized._cache) == 4
