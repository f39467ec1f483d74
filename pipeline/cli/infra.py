"""The command line's shared infrastructure: what every command gets without asking. The frameworks' logs kept
out of the user's way (one line per TFX component), a file-system error as one line rather than a traceback (the
``dialog`` group's :class:`DialogGroup`), Keras' verbosity, and the disk policy of the commands that write corpora
(the size estimate checked against the disk, the 5 GB bound, the memory the banking generator holds; what a write
replaced, said)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from data.reading import available_memory

# TFX's progress lines, kept when the frameworks' other logs are hidden.
PROGRESS = re.compile(r"^Component \S+ is (running|finished)\.$")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (a test runner swaps it), TFX's progress and errors only."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.addFilter(_progress_or_error)
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _progress_or_error(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR or bool(PROGRESS.match(record.getMessage()))


def quiet_frameworks() -> None:
    """Keep the frameworks' noise out of the user's way, in one place: TensorFlow's C++ lines (CUDA, cuDNN,
    TensorRT, oneDNN: set before TensorFlow is imported, which subcommands do lazily), Python's deprecation and
    future warnings, and the logs of TFX and Beam below ERROR, except one line per component started and
    finished. ``dialog --verbose`` shows them all."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
    from absl import logging as absl_logging

    absl_logging.set_verbosity(absl_logging.INFO)  # TFX's progress lines are INFO; the handler below filters
    root = logging.getLogger()
    if not any(isinstance(handler, _StderrHandler) for handler in root.handlers):
        root.addHandler(_StderrHandler())  # the root has a handler now, so the frameworks' basicConfig adds none


_OP_NOISE = re.compile(r"\{\{function_node [^}]*\}\}|\s*\[Op:\w+\]$")


def file_system_error(error: BaseException) -> str | None:
    """One line for a full disk, a read-only or unwritable path, a missing directory: Python's ``OSError`` or
    TensorFlow's file-system errors (an ``OpError`` from its C++ writers, e.g. at a model's export); and for a file
    the readers refused (``data.reading.FormatError``: a named pipe, a malformed line), wherever it was raised (a
    table's fit, a pipeline component). None for any other error, which keeps its traceback."""
    from data.reading import FormatError

    seen: set[int] = set()
    while error is not None and id(error) not in seen:  # the cause a framework wrapped it in
        seen.add(id(error))
        if isinstance(error, FormatError):
            return str(error)
        if isinstance(error, OSError) and error.errno is None and type(error) is not OSError:
            return str(error)  # ours, with its own message (data.atomic.DirectoryBusy)
        if isinstance(error, OSError) and error.errno is not None:
            return f"{error.filename or ''}{': ' if error.filename else ''}{error.strerror}"
        if any(kind.__name__ == "OpError" for kind in type(error).__mro__) and any(
                word in str(error).lower() for word in ("no space left", "read-only file system", "permission denied",
                                                        "disk quota")):
            line = str(getattr(error, "message", error)).strip().splitlines()[0]
            return _OP_NOISE.sub("", line).strip()  # the op's internal names around the path and the reason
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return None


def keras_verbosity() -> int:
    """Keras' ``verbose`` for training a command runs: its progress bar on a terminal, one line per epoch in a log,
    nothing with ``dialog --quiet``."""
    from data.progress import is_quiet, shown

    return 0 if is_quiet() else 1 if shown() else 2


class DialogGroup(click.Group):
    """The ``dialog`` command group: a file-system error in any command (a full disk at a model's export, say)
    is one line, not a traceback of the frameworks underneath."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as error:  # noqa: BLE001 (re-raised unless it is a file-system error)
            line = file_system_error(error)
            if line is None:
                raise
            raise click.ClickException(line) from None


@contextlib.contextmanager
def writing(out: Path) -> Iterator[None]:
    """A directory another process is writing, a full disk or an unwritable path: one line naming it. Files of a
    corpus already in ``out`` that the command wrote over are said (those whose content changed by name: another
    seed or size), so a corpus is never replaced in silence."""
    from data.atomic import recording_replacements

    try:
        with recording_replacements() as replaced:
            yield
    except OSError as error:
        where = error.filename or out
        raise click.ClickException(str(error) if error.errno is None else f"{where}: {error.strerror}") from None
    changed = [Path(path).relative_to(out).as_posix() for path, differs in replaced if differs]
    if changed:
        shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
        click.echo(f"replaced {len(changed)} files of the corpus already in {out} with different content (another "
                   f"seed or size): {shown}", err=True)
    if len(replaced) > len(changed):
        unchanged = len(replaced) - len(changed)
        click.echo(f"{unchanged} file{'s' * (unchanged != 1)} already in {out} written again unchanged", err=True)


# A corpus estimated above this many GB is written only when asked (--yes): a mistyped --dialogs would otherwise
# fill the disk before anything said so.
LARGE_CORPUS_GB = 5


def check_room(out: Path, size: int, yes: bool, memory: int | None = None, fewer: str = "--dialogs or --tasks"
                ) -> None:
    """Refuse a corpus of about ``size`` bytes that the disk under ``out`` cannot hold, or a large one not asked
    for, or one whose generation needs about ``memory`` bytes more than the machine has available (unless asked
    for: the figure is an estimate); each named with the estimate, before anything is written."""
    import shutil

    existing = next(p for p in (out.absolute(), *out.absolute().parents) if p.exists())
    free = shutil.disk_usage(existing).free
    gigabytes = size / 1e9
    if size > free:
        raise click.ClickException(f"the corpus would take about {gigabytes:,.1f} GB and {existing} has "
                                   f"{free / 1e9:,.1f} GB free; ask for fewer {fewer}")
    if gigabytes > LARGE_CORPUS_GB and not yes:
        raise click.ClickException(f"the corpus would take about {gigabytes:,.1f} GB (more than {LARGE_CORPUS_GB} GB); "
                                   "pass --yes to write it")
    available = available_memory()
    if memory is not None and available is not None and memory > available and not yes:
        raise click.ClickException(f"the corpus ({gigabytes:,.1f} GB) would need about {memory / 1e9:,.1f} GB of "
                                   f"memory to generate and {available / 1e9:,.1f} GB is available; ask for fewer "
                                   f"{fewer}, or pass --yes to try")
