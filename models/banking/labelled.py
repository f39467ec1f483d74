"""The banking task's turn examples with their dialog's line of the labels sidecar (``data.banking.labels``): the
intents MMN trains its networks and selector on, and the test cases Tables 8-9 score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from data.banking.labels import read_labels
from data.layout import BANKING_TASK, TaskFiles, task_labels_name
from models.examples import DialogId, TaskData, TurnExample


@dataclass(frozen=True)
class LabelledExample:
    example: TurnExample
    intent: str
    templates: str  # trn, dev, IT, OOT
    challenge: str
    multiple: bool
    is_challenge_turn: bool


def labels_path(files: TaskFiles) -> Path:
    """The sidecar beside the task's dialog files."""
    return Path(files.splits["trn"]).parent / task_labels_name(BANKING_TASK, files.name)


def read_task_labels(files: TaskFiles) -> list[dict]:
    return read_labels(labels_path(files))


def labelled_examples(task: TaskData, split: str, labels: Sequence[dict]) -> list[LabelledExample]:
    """Every example of ``split`` with its dialog's labels; a dialog without a line is an error, not a guess."""
    by_dialog = {label["dialog"]: label for label in labels if label["split"] == split}
    result = []
    for example in task.split(split):
        index = DialogId.parse(example.dialog_id).index
        label = by_dialog.get(index)
        if label is None:
            raise ValueError(f"{task.files.splits[split]}: dialog {index} has no line in the labels sidecar")
        result.append(LabelledExample(example, label["intent"], label["templates"], label["challenge"],
                                      bool(label.get("multiple")), example.turn in label.get("challenge_turns", [])))
    return result


def dialog_intents(task: TaskData, labels: Sequence[dict], splits: Sequence[str]) -> dict[str, str]:
    """The intent of every dialog of ``splits``, by dialog id."""
    return {e.example.dialog_id: e.intent for split in splits for e in labelled_examples(task, split, labels)}
