"""The banking examples with their labels: intent, template split and challenge turns reach each example."""

from __future__ import annotations

import pytest

from models.banking.labelled import dialog_intents, labelled_examples, labels_path, read_task_labels
from models.examples import TaskData


def test_examples_carry_intent_template_split_and_challenge_turns(banking) -> None:
    _, files = banking
    task = TaskData.load(files)
    tests = labelled_examples(task, "tst-OOT", read_task_labels(files))
    assert {e.templates for e in tests} == {"OOT"}
    marked = [e for e in tests if e.is_challenge_turn]
    assert marked and all(e.challenge != "none" for e in marked)
    # a turn-compression challenge turn answers "yes , <new value>" with the validation API call
    compression = [e for e in marked if e.challenge == "turn_compression"]
    assert compression and all(e.example.answer.startswith("api_call check_") for e in compression)


def test_intents_by_dialog_and_a_dialog_without_labels_is_an_error(banking) -> None:
    out, files = banking
    assert labels_path(files) == out / "dialog-babi-task7-banking-labels.jsonl"
    task = TaskData.load(files)
    labels = read_task_labels(files)
    intents = dialog_intents(task, labels, ("trn", "dev"))
    assert set(intents) == {e.dialog_id for split in ("trn", "dev") for e in task.split(split)}
    assert intents["banking/trn/0"] == labels[0]["intent"]
    with pytest.raises(ValueError, match="dialog 0 has no line in the labels sidecar"):
        labelled_examples(task, "trn", [label for label in labels if label != labels[0]])
