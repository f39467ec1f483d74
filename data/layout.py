"""File names of the public dialog-bAbI layout, and discovery of the tasks a corpus directory holds.

The one place that knows how a task id maps to file names; nothing here depends on our generator, so any
directory in the public layout is read the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

TASK_NAMES: dict[int, str] = {
    1: "API-calls",
    2: "API-refine",
    3: "options",
    4: "phone-address",
    5: "full-dialogs",
    6: "dstc2",
}
SPLITS: tuple[str, ...] = ("trn", "dev", "tst", "tst-OOV")
# Splits a complete corpus holds for a task: the simulated tasks have an OOV test set, converted ones do not.
SIMULATED_TASKS = frozenset({1, 2, 3, 4, 5})
SHARED_CANDIDATES = "dialog-babi-candidates.txt"
SHARED_KB = "dialog-babi-kb-all.txt"

_DIALOG_FILE = re.compile(r"dialog-babi-task(\d+)-(.+)-(trn|dev|tst-OOV|tst)\.txt")


def dialog_file_name(task: int, split: str, name: str | None = None) -> str:
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-{split}.txt"


def task_candidates_name(task: int, name: str | None = None) -> str:
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-candidates.txt"


def task_kb_name(task: int, name: str | None = None) -> str:
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-kb.txt"


def expected_splits(task: int) -> tuple[str, ...]:
    return SPLITS if task in SIMULATED_TASKS else SPLITS[:3]


@dataclass
class TaskFiles:
    """The files of one task found in a corpus directory."""

    task: int
    name: str
    splits: dict[str, Path] = field(default_factory=dict)
    candidates: Path | None = None
    kb: Path | None = None

    @property
    def label(self) -> str:
        return f"task{self.task}-{self.name}"


def _file_or_none(path: Path) -> Path | None:
    return path if path.is_file() else None


def discover(directory: str | Path) -> dict[int, TaskFiles]:
    """The tasks of a corpus directory, by task number, with their split, candidate and KB files.

    A task uses its own ``...-candidates.txt`` (and then only its own ``...-kb.txt``) when present; otherwise
    the shared ``dialog-babi-candidates.txt`` and its own or the shared ``dialog-babi-kb-all.txt``.
    """
    directory = Path(directory)
    tasks: dict[int, TaskFiles] = {}
    for path in sorted(directory.iterdir()):
        match = _DIALOG_FILE.fullmatch(path.name)
        if match is None or not path.is_file():
            continue
        task, name, split = int(match.group(1)), match.group(2), match.group(3)
        entry = tasks.setdefault(task, TaskFiles(task, name))
        if entry.name != name:
            raise ValueError(f"{path}: task {task} is named both {entry.name!r} and {name!r} in {directory}")
        entry.splits[split] = path
    for entry in tasks.values():
        own_candidates = directory / task_candidates_name(entry.task, entry.name)
        own_kb = directory / task_kb_name(entry.task, entry.name)
        if own_candidates.is_file():
            # A task with a candidate set of its own (task 6 in the public release) is a world of its own:
            # the shared KB of tasks 1-5 is not its KB.
            entry.candidates = own_candidates
            entry.kb = own_kb if own_kb.is_file() else None
        else:
            entry.candidates = _file_or_none(directory / SHARED_CANDIDATES)
            entry.kb = _file_or_none(own_kb) or _file_or_none(directory / SHARED_KB)
    return dict(sorted(tasks.items()))
