"""Units of the custom components: ExampleGen parsing and splits, the TFMA dialog metrics, the data gate's checks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_model_analysis.metrics import metric_types

from components.data_gate import blocking_problems, js_divergence
from components.dialog_example_gen import _file_examples, _labels, corpus_resources, input_config
from components.dialog_extractors import (
    EXAMPLES_INPUT,
    MemoizedSliceKeysFn,
    _with_examples_feature,
    _with_kept_features,
    sliced_features,
)
from components.dialog_metrics import _RankingCombiner
from data.babi_format import FormatError
from data.banking.generation import BankingPlan
from data.banking.generation import generate as generate_banking
from data.banking.labels import challenge_values
from data.layout import discover
from data.babi.generation import GenerationPlan, generate
from models.tf_examples import from_tf_example


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=2, dialogs_per_split=3, tasks=(1, 3)), out, runner="local")
    return out


def test_input_config_selects_tasks_and_keeps_test_splits_together() -> None:
    patterns = {split.name: split.pattern for split in input_config([3, 1]).splits}
    assert patterns == {"train": "dialog-babi-task[13]-*-trn.txt", "eval": "dialog-babi-task[13]-*-dev.txt",
                        "test": "dialog-babi-task[13]-*-tst*.txt"}
    assert input_config([]).splits[0].pattern == "dialog-babi-task*-*-trn.txt"


def test_examples_carry_the_feature_table_and_the_answer_index(corpus: Path) -> None:
    resources = corpus_resources(str(corpus), ["dialog-babi-task*-*-trn.txt"])
    assert resources.tasks == (1, 3) and len(resources.candidates) == 4212 and resources.facts
    index = {c: i for i, c in enumerate(resources.candidates)}
    path = corpus / "dialog-babi-task3-options-tst-OOV.txt"
    serialized = list(_file_examples(str(path), 3, "tst-OOV", index))
    first = tf.train.Example.FromString(serialized[0]).features.feature
    assert first["dialog_id"].bytes_list.value == [b"babi-3/tst-OOV/0"]
    assert first["split"].bytes_list.value == [b"tst-OOV"] and first["challenge"].bytes_list.value == [b"none"]
    # Task 3 dialogs open with the API output: KB results are memory before the first bot turn, spoken by "user".
    assert all(b" R_" in m for m in first["memory"].bytes_list.value) and first["turn"].int64_list.value == [0]
    assert set(first["memory_speaker"].bytes_list.value) == {b"user"}
    examples = [from_tf_example(s) for s in serialized]
    assert all(resources.candidates[tf.train.Example.FromString(s).features.feature["answer_index"]
                                    .int64_list.value[0]] == e.answer for s, e in zip(serialized, examples,
                                                                                      strict=True))
    assert [e.turn for e in examples if e.dialog_id == "babi-3/tst-OOV/1"][:3] == [0, 1, 2]


def test_banking_examples_carry_template_split_and_challenge_from_the_sidecar(tmp_path: Path) -> None:
    generate_banking(BankingPlan(seed=4, train_dialogs=2, dev_dialogs=1, test_dialogs=2), tmp_path)
    files = discover(tmp_path)[7]
    resources = corpus_resources(str(tmp_path), ["dialog-babi-task7-*-tst*.txt"])
    index = {c: i for i, c in enumerate(resources.candidates)}
    labels = _labels(str(tmp_path), files)["tst-OOT"]
    examples = [tf.train.Example.FromString(s).features.feature
                for s in _file_examples(str(files.splits["tst-OOT"]), 7, "tst-OOT", index, labels)]
    assert {e["task"].bytes_list.value[0] for e in examples} == {b"banking"}
    assert {e["split"].bytes_list.value[0] for e in examples} == {b"OOT"}
    challenges = {e["challenge"].bytes_list.value[0].decode() for e in examples}
    assert {"none", "turn_compression", "turn_compression:context", "audit_more-multiple"} <= challenges
    assert challenges <= set(challenge_values())  # the curated schema's domain
    compressed = [e for e in examples if e["challenge"].bytes_list.value[0] == b"turn_compression"]
    assert all(e["answer"].bytes_list.value[0].startswith(b"api_call check_") for e in compressed)
    assert _labels(str(tmp_path / "nowhere"), files) is None


def test_a_malformed_line_names_file_and_line(corpus: Path, tmp_path: Path) -> None:
    bad = tmp_path / "dialog-babi-task1-API-calls-trn.txt"
    bad.write_text("1 hi\thello what can i help you with today\n3 skipped\tid\n")
    with pytest.raises(FormatError, match=r"dialog-babi-task1-API-calls-trn.txt:2"):
        list(_file_examples(str(bad), 1, "trn", {}))


def test_tasks_with_different_candidate_sets_are_refused(corpus: Path, tmp_path: Path) -> None:
    for path in corpus.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    own = tmp_path / "dialog-babi-task3-options-candidates.txt"
    own.write_text("1 hello\n")
    with pytest.raises(ValueError, match="different candidate sets"):
        corpus_resources(str(tmp_path), ["dialog-babi-task*-*-trn.txt"])


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


def test_push_is_atomic_and_clears_a_killed_push(tmp_path: Path) -> None:
    from components.atomic_pusher import push_atomically

    model = tmp_path / "model"
    (model / "variables").mkdir(parents=True)
    (model / "saved_model.pb").write_bytes(b"pb")
    (model / "variables" / "variables.index").write_bytes(b"ix")
    serving = tmp_path / "serving"
    (serving / ".123.tmp-0123abcd").mkdir(parents=True)  # what a killed push leaves behind
    path, version = push_atomically(str(model), str(serving))
    assert Path(path) == serving / version and version.isdigit()
    assert (serving / version / "saved_model.pb").read_bytes() == b"pb"
    assert (serving / version / "variables" / "variables.index").is_file()
    second, next_version = push_atomically(str(model), str(serving))
    assert int(next_version) > int(version)  # never overwrites a pushed version
    assert sorted(p.name for p in serving.iterdir()) == sorted([version, next_version])
