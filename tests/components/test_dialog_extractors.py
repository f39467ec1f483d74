"""The Evaluator's extractors: the examples named, only the slicing and metric features kept, memoized slice keys
equal to TFMA's, a batch split into groups of turns that share their slices."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from components.dialog_extractors import (
    EXAMPLES_INPUT,
    MemoizedSliceKeysFn,
    _split_batch,
    _split_record_batch,
    _with_examples_feature,
    _with_kept_features,
    groups_its_turns,
    metric_outputs,
    sliced_features,
)
from components.dialog_metrics import DIALOG_ID


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
    # Of the model's outputs, the metrics' prediction key alone, when one is named: one model's outputs as TFMA
    # stores them (no name), and a candidate's and a baseline's (by name).
    outputs = {"indices": np.array([[1, 2], [3, 4]]), "responses": np.array([[b"x", b"y"], [b"z", b"w"]], dtype=object)}
    predicted = {**named, tfma.PREDICTIONS_KEY: outputs}
    assert set(_with_kept_features(predicted, ("task",), {"": "indices"})[tfma.PREDICTIONS_KEY]) == {"indices"}
    assert set(_with_kept_features(predicted, ("task",))[tfma.PREDICTIONS_KEY]) == {"indices", "responses"}
    assert set(predicted[tfma.PREDICTIONS_KEY]) == {"indices", "responses"}  # not changed in place
    both = {**named, tfma.PREDICTIONS_KEY: {"candidate": outputs, "baseline": dict(outputs)}}
    kept = _with_kept_features(both, ("task",), {"candidate": "indices", "baseline": "indices"})[tfma.PREDICTIONS_KEY]
    assert {name: set(value) for name, value in kept.items()} == {"candidate": {"indices"}, "baseline": {"indices"}}
    two = tfma.EvalConfig(model_specs=[tfma.ModelSpec(name="candidate", prediction_key="indices"),
                                       tfma.ModelSpec(name="baseline", prediction_key="indices", is_baseline=True)])
    assert metric_outputs(two) == {"candidate": "indices", "baseline": "indices"}
    assert metric_outputs(tfma.EvalConfig(model_specs=[tfma.ModelSpec(prediction_key="indices")])) == {"": "indices"}
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


def _batch(splits: list[bytes], tasks: list[bytes], labels: list[list[int]]) -> dict:
    """A batched extract as TFMA has it before unbatching: a label list of any length per turn (a VarLen value, as
    a Movie Dialog batch whose exchanges have different numbers of right answers)."""
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis.api import types

    size = len(splits)
    indices = np.array([[turn, position] for turn, row in enumerate(labels) for position in range(len(row))],
                       np.int64).reshape(-1, 2)
    values = np.array([label for row in labels for label in row], np.int64)
    width = max(len(row) for row in labels)
    rng = np.random.default_rng(0)
    return {tfma.FEATURES_KEY: {"split": np.array(splits, dtype=object).reshape(size, 1),
                                "task": np.array(tasks, dtype=object).reshape(size, 1),
                                DIALOG_ID: np.array([b"d%d" % (turn // 3) for turn in range(size)],
                                                    dtype=object).reshape(size, 1)},
            tfma.LABELS_KEY: types.VarLenTensorValue(values=values, indices=indices,
                                                     dense_shape=np.array([size, width])),
            tfma.PREDICTIONS_KEY: {"indices": np.stack([rng.permutation(6)[:3] for _ in range(size)]).astype(np.int32),
                                   "scores": rng.random((size, 3)).astype(np.float32)}}


def _metrics(extracts: list[dict]) -> dict[str, float]:
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis.metrics import metric_types

    from components.dialog_metrics import _RankingCombiner

    keys = {name: metric_types.MetricKey(name=name) for name in
            ("per_response_accuracy", "per_dialog_accuracy", "hits_at_2", "hits_at_10", "turns")}
    combiner = _RankingCombiner(keys, (1, 2, 10))
    accumulator = combiner.create_accumulator()
    for extract in extracts:
        accumulator = combiner.add_input(accumulator, metric_types.StandardMetricInputs(
            labels=extract[tfma.LABELS_KEY], predictions=extract[tfma.PREDICTIONS_KEY],
            features=extract[tfma.FEATURES_KEY]))
    return {key.name: value for key, value in combiner.extract_output(accumulator).items()}


def test_a_batch_is_split_into_its_slices_groups_with_the_metrics_of_its_turns() -> None:
    """Each group holds the turns of one split and task (the sliced features as one turn's extract has them); the
    metrics over the groups are those over TFMA's one extract per turn, any right answer counting."""
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis.extractors import unbatch_extractor

    rng = np.random.default_rng(1)
    size = 40
    splits = [[b"dev", b"tst"][i] for i in rng.integers(0, 2, size)]
    tasks = [[b"babi-1", b"babi-2", b"babi-3"][i] for i in rng.integers(0, 3, size)]
    labels = [rng.choice(6, size=int(rng.integers(0, 3)), replace=False).tolist() for _ in range(size)]
    batched = _batch(splits, tasks, labels)
    groups = _split_batch(batched, ("split", "task", "challenge"))
    turns = unbatch_extractor._extract_unbatched_inputs(batched)
    assert len(turns) == size and len(groups) == len(set(zip(splits, tasks, strict=True)))
    assert sum(len(group[tfma.LABELS_KEY]) for group in groups) == size
    for group in groups:
        features = group[tfma.FEATURES_KEY]
        assert features["split"].shape == turns[0][tfma.FEATURES_KEY]["split"].shape == (1,)
        rows = [i for i in range(size) if (splits[i], tasks[i]) == (features["split"][0], features["task"][0])]
        assert features[DIALOG_ID].ravel().tolist() == [b"d%d" % (i // 3) for i in rows]
    grouped, one_by_one = _metrics(groups), _metrics(turns)
    assert grouped == one_by_one and one_by_one["turns"] == size
    assert 0 < one_by_one["per_response_accuracy"] < one_by_one["hits_at_2"] < one_by_one["hits_at_10"] < 1
    # A sliced feature with other than one value per turn: the batch is split per turn, as TFMA does.
    batched[tfma.FEATURES_KEY]["task"] = np.repeat(batched[tfma.FEATURES_KEY]["task"], 2, axis=1)
    assert len(_split_batch(batched, ("split", "task"))) == size


def test_groups_of_turns_only_where_nothing_counts_or_resamples_extracts() -> None:
    import tensorflow_model_analysis as tfma

    from pipeline.pipeline import eval_config, movie_eval_config

    assert groups_its_turns(eval_config(0.5, 0.1)) and groups_its_turns(movie_eval_config(0.5, 0.1))
    with_intervals = eval_config(0.5, 0.1)
    with_intervals.options.compute_confidence_intervals.value = True
    other_metric = eval_config(0.5, 0.1)
    other_metric.metrics_specs[0].metrics.append(tfma.MetricConfig(class_name="ExampleCount"))
    small_slices = eval_config(0.5, 0.1)
    small_slices.options.min_slice_size.value = 5
    assert not any(groups_its_turns(config) for config in (with_intervals, other_metric, small_slices))


def test_a_batch_of_examples_reaches_the_model_in_slices_of_at_most_the_cap() -> None:
    """Every row once, in order, no slice above the cap; a batch within it, or an extract already holding more than
    the examples, goes on as it is."""
    import pyarrow as pa
    from tensorflow_model_analysis import constants

    key = constants.ARROW_RECORD_BATCH_KEY
    batch = pa.RecordBatch.from_pydict({"turn": list(range(10))})
    sliced = _split_record_batch({key: batch}, 4)
    assert [part[key].num_rows for part in sliced] == [4, 4, 2]
    assert [row for part in sliced for row in part[key].column(0).to_pylist()] == list(range(10))
    small = {key: batch}
    assert _split_record_batch(small, 10)[0] is small
    other = {key: batch, "features": {}}
    assert _split_record_batch(other, 4) == [other]


def test_the_turns_of_a_batch_reach_the_model_in_order_of_memory_length() -> None:
    """A call pads its turns to the longest memory among them: each slice holds turns of near equal length (every
    turn once, its raw record beside it, ties in the order read; a turn without memory counts as none)."""
    import pyarrow as pa
    from tensorflow_model_analysis import constants

    key = constants.ARROW_RECORD_BATCH_KEY
    lengths = [5, 0, 3, None, 5, 1, 3, 0]  # None: no memory feature in that turn's example
    memory = [None if n is None else [b"line"] * n for n in lengths]
    batch = pa.RecordBatch.from_pydict({"memory": memory, "raw": [f"turn {i}" for i in range(8)]})
    sliced = _split_record_batch({key: batch}, 3)
    rows = [row for part in sliced for row in part[key].to_pylist()]
    assert [row["raw"] for row in rows] == ["turn 1", "turn 3", "turn 7", "turn 5", "turn 2", "turn 6", "turn 0",
                                            "turn 4"]
    assert all(row["memory"] == memory[int(row["raw"].split()[1])] for row in rows)
    assert [part[key].num_rows for part in sliced] == [3, 3, 2]
