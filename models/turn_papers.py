"""What a paper of dialog-bAbI files shares with the others (``models.papers``): the tasks of its own a corpus
holds, and ``dialog train``'s reading and fitting of one task. A paper's ``plugin`` calls these; the registry of
papers does not, so it stays below the method registry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from models.papers import LazyProfiles


class TurnPaper(LazyProfiles):
    """What a paper of dialog-bAbI files inherits: the tasks of its own a corpus holds, and its pipeline profiles
    (:class:`~models.papers.LazyProfiles`)."""

    tasks: Mapping[int, str]

    def tasks_in(self, corpus: str | Path) -> tuple[int, ...]:
        return turn_tasks(corpus, self.tasks)


def turn_tasks(corpus: str | Path, numbers: Mapping[int, str]) -> tuple[int, ...]:
    """The tasks among ``numbers`` that a local directory in the dialog-bAbI layout holds: the ``tasks_in`` of a
    paper whose corpus is dialog-bAbI files (``data.layout``)."""
    from data.layout import discover

    if not Path(corpus).is_dir():
        return ()
    return tuple(task for task in discover(corpus) if task in numbers)


def fit_turns(corpus: Path, task: int | None, method: str, paper: str, out: str, settings: Any,
              config: Any) -> dict[str, Any]:
    """``dialog train`` for a paper of dialog-bAbI files: the output checked before anything is read
    (``models.serving.export.prepare_output``), the task's trn and dev read, ``method`` fitted with ``config``
    (its SavedModel written at ``out``); the training summary."""
    from dataclasses import replace

    from data.layout import discover
    from models import methods
    from models.examples import TaskData
    from models.serving.export import prepare_output

    prepare_output(out)
    if task is None:
        raise ValueError("give --task: a model of dialog-bAbI files trains on one task")
    loaded = TaskData.load(discover(corpus)[task], splits=("trn", "dev"))
    fitted = methods.get(method, paper).fit(loaded, out, replace(settings, config=config))
    return dict(getattr(fitted, "summary", {}))
