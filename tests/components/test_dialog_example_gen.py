"""The ExampleGen: its splits and input config, one tf.Example per bot turn with the feature table, banking labels
from the sidecar, errors that name file and line."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pytest
import tensorflow as tf

from components.dialog_example_gen import (
    _file_examples,
    _labels,
    _matched_files,
    corpus_resources,
    input_config,
    split_pattern,
)
from data.babi.generation import GenerationPlan, generate
from data.babi_format import FormatError
from data.banking.generation import BankingPlan
from data.banking.generation import generate as generate_banking
from data.banking.labels import challenge_values
from data.layout import discover
from models.examples import TaskData
from models.tf_examples import from_tf_example


def test_input_config_selects_tasks_and_keeps_test_splits_together() -> None:
    patterns = {split.name: split.pattern for split in input_config([3, 1]).splits}
    assert patterns == {"train": "dialog-babi-task[13]-*-trn.txt", "eval": "dialog-babi-task[13]-*-dev*.txt",
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


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=2, dialogs_per_split=3, tasks=(1, 3)), out, runner="local")
    return out


def test_the_eval_split_holds_the_development_challenge_sets_told_apart_by_their_split(tmp_path: Path,
                                                                                       corpus: Path) -> None:
    """The banking dev-OOP file is read with dev (the state ranker chooses its epoch on both; the report has its
    slices); its turns keep their ``split``, by which the Trainer's task gives them back as their own split. A
    restaurant corpus's eval split is its dev files alone."""
    generate_banking(BankingPlan(seed=4, train_dialogs=2, dev_dialogs=1, test_dialogs=2), tmp_path)
    files = discover(tmp_path)[7]
    matched = [posixpath.basename(path) for path in _matched_files(str(tmp_path), split_pattern([7], "eval"))]
    assert sorted(matched) == sorted([files.splits["dev"].name, files.splits["dev-OOP"].name])
    assert all(path.endswith("-dev.txt") for path in _matched_files(str(corpus), split_pattern([], "eval")))
    resources = corpus_resources(str(tmp_path), [split_pattern([7], "eval")])
    index = {c: i for i, c in enumerate(resources.candidates)}
    labels = _labels(str(tmp_path), files)
    dev = [from_tf_example(serialized)
           for split in ("dev", "dev-OOP")
           for serialized in _file_examples(str(files.splits[split]), 7, split, index, labels[split])]
    task = TaskData.of_examples([], dev, resources.candidates, resources.facts)
    assert {e.split for e in task.split("dev")} == {"dev"} and {e.split for e in task.split("dev-OOP")} == {"dev-OOP"}
    assert len(task.split("dev")) + len(task.split("dev-OOP")) == len(dev)
