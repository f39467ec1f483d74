"""The suite's own scheduling: the long files it sends out first exist, and xdist keeps that order."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONG_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_the_long_files_sent_out_first_exist_and_xdist_keeps_their_order() -> None:
    """A renamed file would silently go back to the end of the queue; without --no-loadscope-reorder, xdist sorts
    files by their number of tests and the order is lost."""
    assert [path for path in LONG_FIRST if not (ROOT / path).is_file()] == []
    assert len(set(LONG_FIRST)) == len(LONG_FIRST)
    (command,) = (line for line in (ROOT / "Makefile").read_text().splitlines() if "/pytest " in line)
    assert "--dist loadfile" in command and "--no-loadscope-reorder" in command
