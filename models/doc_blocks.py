"""Blocks of a document (README.md, a paper page) that a command writes between two marker lines, read from a
table's CSV: so a figure there is never typed by hand, and ``make tables`` brings it up to date."""

from __future__ import annotations

from pathlib import Path

from data.atomic import write_text_atomic


def write_block(document: str | Path, start: str, end: str, block: str) -> None:
    """Replace what lies between the ``start`` and ``end`` marker lines of ``document`` (the markers kept) with
    ``block``, atomically; a document without the start marker is a ValueError naming it, so a moved marker is not
    silently skipped."""
    text = Path(document).read_text()
    at, until = text.find(start), text.find(end)
    if at < 0:
        raise ValueError(f"{document}: no {start} line to put the block at")
    until = until + len(end) if until >= 0 else at + len(start)
    write_text_atomic(Path(document), f"{text[:at]}{start}\n\n{block.strip()}\n{end}{text[until:]}")
