"""A corpus's dialogs as a person reads them (``dialog show``): one speaker per line, API results apart, for the
dialog-bAbI layout (tasks 1-7) and the Movie Dialog layout alike. The files are read through the project's
readers, so a malformed line is the same FormatError naming the file and line."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from data.babi_format import read_dialogs as read_babi_dialogs
from data.corpus import Dialog, KBResult, Turn
from data.layout import discover
from data.movie.reader import MovieDialog, discover_movie_corpus
from data.movie.reader import iter_dialogs as iter_movie_dialogs
from data.reading import text_lines

# The Movie Dialog layout names its splits train/dev/test; the command takes the dialog-bAbI names for both.
MOVIE_SPLITS = {"trn": "train", "dev": "dev", "tst": "test"}


def format_babi(dialog: Dialog, title: str) -> str:
    """``user``, ``bot`` and ``api`` (the KB results an API call returned) lines; a silent user turn is shown as
    the file has it, since the bot's answer to silence is what the tasks test."""
    lines = [title]
    for line in dialog.lines:
        if isinstance(line, Turn):
            lines += [f"  user  {line.user}", f"  bot   {line.bot}"]
        elif isinstance(line, KBResult):
            lines.append(f"  api   {line.text}")
    return "\n".join(lines)


def format_movie(dialog: MovieDialog, title: str) -> str:
    """``user`` lines and the ``bot``'s answers (a list of right answers joined by ``|``)."""
    lines = [title]
    for exchange in dialog.exchanges:
        lines += [f"  user  {exchange.text}", f"  bot   {' | '.join(exchange.answers)}"]
    return "\n".join(lines)


def show(directory: str | Path, task: int, split: str = "trn", first: int = 0, count: int = 1,
         movie: bool = False) -> Iterator[str]:
    """Dialogs ``first`` to ``first + count - 1`` of a task's split, formatted; ``movie``: the directory is in the
    Movie Dialog layout (the caller has looked its paper up), else dialog-bAbI files. Raises ValueError naming what
    is missing (the task, the split, or a dialog past the file's end)."""
    if movie:
        corpus = discover_movie_corpus(directory)
        movie_split = MOVIE_SPLITS.get(split)
        path = corpus.tasks.get(task, {}).get(movie_split) if movie_split else None
        if path is None:
            raise ValueError(f"{directory}: no {split} file of Movie Dialog task {task} (tasks "
                             f"{sorted(corpus.tasks)}; splits {', '.join(MOVIE_SPLITS)})")
        with text_lines(path) as lines:  # streamed: a paper-scale training file is gigabytes
            dialogs = iter_movie_dialogs(lines, path, corpus.entity_list())
            shown = [format_movie(d, f"task {task} {split} dialog {n} ({path})")
                     for n, d in itertools.islice(enumerate(dialogs), first, first + count)]
    else:
        files = discover(directory).get(task)
        if files is None or split not in files.splits:
            raise ValueError(f"{directory}: no {split} file of task {task}")
        dialogs = read_babi_dialogs(files.splits[split]).dialogs
        shown = [format_babi(d, f"task {task} {split} dialog {n} ({files.splits[split]})")
                 for n, d in itertools.islice(enumerate(dialogs), first, first + count)]
    if not shown:
        raise ValueError(f"task {task} {split} has no dialog {first}")
    yield from shown
