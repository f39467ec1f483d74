"""Progress bars of the long commands (generation, conversion, ranking a split): tqdm on stderr, drawn only when
stderr is a terminal and the user has not asked for quiet (``dialog --quiet``), so output that is piped or logged,
and every stdout, stays clean. One switch for every command: :func:`set_quiet`."""

from __future__ import annotations

import sys

from tqdm import tqdm

_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def is_quiet() -> bool:
    return _quiet


def shown() -> bool:
    """Whether bars are drawn: stderr is a terminal and quiet was not asked for."""
    return not _quiet and sys.stderr.isatty()


def bar(total: int | None, description: str, unit: str = "it") -> tqdm:
    """A bar to ``update(n)`` as work is done (a context manager: closed at the end, its final state left)."""
    return tqdm(total=total, desc=description, unit=unit, file=sys.stderr, disable=not shown(), leave=True,
                dynamic_ncols=True, unit_scale=True)
