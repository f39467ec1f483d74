"""``NAME=VALUE`` settings of a command (a generator's knobs), split and their names checked in one place, so that
every command that takes them refuses a bad one with the same message."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def named_settings(settings: Iterable[str], names: Sequence[str], what: str) -> list[tuple[str, str, str]]:
    """(setting, name, value text) of each ``NAME=VALUE`` setting, in order; a setting without ``=`` or whose name
    is not in ``names`` is a ``ValueError`` naming it (``what``: how the message calls a setting)."""
    split = []
    for setting in settings:
        name, equals, text = setting.partition("=")
        if not equals or name not in names:
            raise ValueError(f"{what} {setting!r}: expected NAME=VALUE with NAME one of {', '.join(names)}")
        split.append((setting, name, text))
    return split
