"""File names of the public dialog-bAbI layout, and discovery of the tasks a corpus directory holds.

The one place that knows how a task id maps to file names; nothing here depends on our generator, so any
directory in the public layout is read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

TASK_NAMES: dict[int, str] = {
    1: "API-calls",
    2: "API-refine",
    3: "options",
    4: "phone-address",
    5: "full-dialogs",
    6: "dstc2",
    7: "banking",
}
SPLITS: tuple[str, ...] = ("trn", "dev", "tst", "tst-OOV", "tst-OOT", "dev-OOP")
# The splits choices may be made on: dev, and the banking development challenge sets.
DEVELOPMENT_SPLITS: tuple[str, ...] = ("dev", "dev-OOP")
# Splits a complete corpus holds for a task: the simulated tasks have an OOV test set, converted ones do not.
SIMULATED_TASKS = frozenset({1, 2, 3, 4, 5})
SHARED_CANDIDATES = "dialog-babi-candidates.txt"
SHARED_KB = "dialog-babi-kb-all.txt"

_DIALOG_FILE = re.compile(r"dialog-babi-task(\d+)-(.+)-(trn|dev-OOP|dev|tst-OOV|tst-OOT|tst)\.txt")
# The banking self-play corpus: in-template tests in tst, out-of-template tests in tst-OOT, and its development
# challenge sets (the out-of-pattern cases written with the development templates) in dev-OOP.
BANKING_TASK = 7


def parse_tasks(text: str) -> tuple[int, ...]:
    """Task numbers separated by commas (``"1,3"``), each once, in order; a clear error for anything else. The one
    reader of a task list: the command line's ``--tasks``, the runners' environment and flags."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not all(part.isdigit() for part in parts):
        raise ValueError(f"expected task numbers separated by commas, got {text!r}")
    return tuple(sorted({int(part) for part in parts}))


def dialog_file_name(task: int, split: str, name: str | None = None) -> str:
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-{split}.txt"


def task_candidates_name(task: int, name: str | None = None) -> str:
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-candidates.txt"


def task_kb_name(task: int, name: str | None = None) -> str:
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-kb.txt"


def expected_splits(task: int) -> tuple[str, ...]:
    if task == BANKING_TASK:
        return ("trn", "dev", "dev-OOP", "tst", "tst-OOT")
    return SPLITS[:4] if task in SIMULATED_TASKS else SPLITS[:3]


def task_labels_name(task: int, name: str | None = None) -> str:
    """The sidecar of per-dialog labels (banking: intent, template split, challenge), JSON lines."""
    return f"dialog-babi-task{task}-{name or TASK_NAMES[task]}-labels.jsonl"


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


def discover_names(names: Iterable[str]) -> dict[int, TaskFiles]:
    """The tasks of a directory listing (file names only): TaskFiles whose paths are bare names.

    A task uses its own ``...-candidates.txt`` (and then only its own ``...-kb.txt``) when present; otherwise
    the shared ``dialog-babi-candidates.txt`` and its own or the shared ``dialog-babi-kb-all.txt``. Working on
    names lets readers of remote storage (the TFX ExampleGen on ``gs://``) share the rules with local ones.
    """
    present = set(names)
    tasks: dict[int, TaskFiles] = {}
    for name in sorted(present):
        match = _DIALOG_FILE.fullmatch(name)
        if match is None:
            continue
        task, task_name, split = int(match.group(1)), match.group(2), match.group(3)
        entry = tasks.setdefault(task, TaskFiles(task, task_name))
        if entry.name != task_name:
            raise ValueError(f"{name}: task {task} is named both {entry.name!r} and {task_name!r}")
        entry.splits[split] = Path(name)

    def named(name: str) -> Path | None:
        return Path(name) if name in present else None

    for entry in tasks.values():
        own_candidates = task_candidates_name(entry.task, entry.name)
        own_kb = task_kb_name(entry.task, entry.name)
        if own_candidates in present:
            # A task with a candidate set of its own (task 6 in the public release) is a world of its own:
            # the shared KB of tasks 1-5 is not its KB.
            entry.candidates = Path(own_candidates)
            entry.kb = named(own_kb)
        else:
            entry.candidates = named(SHARED_CANDIDATES)
            entry.kb = named(own_kb) or named(SHARED_KB)
    return dict(sorted(tasks.items()))


def discover(directory: str | Path) -> dict[int, TaskFiles]:
    """The tasks of a corpus directory, by task number, with their split, candidate and KB files."""
    directory = Path(directory)
    try:
        # every entry, files or not: a split name that is a directory or a broken link is then read, and named
        tasks = discover_names(path.name for path in directory.iterdir())
    except ValueError as error:
        raise ValueError(f"{directory}: {error}") from None
    for entry in tasks.values():
        entry.splits = {split: directory / name for split, name in entry.splits.items()}
        entry.candidates = directory / entry.candidates if entry.candidates else None
        entry.kb = directory / entry.kb if entry.kb else None
    return tasks
