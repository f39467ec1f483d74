"""Reads that cannot hang or run away: only regular files, and no line past the bound."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from data import reading
from data.babi_format import FormatError, read_text
from data.reading import MAX_LINE_BYTES, check_regular, read_bytes, text_lines


def _special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"dialog-babi-task1-API-calls-{kind}.txt"
    if kind == "socket":  # a socket's path is at most 107 bytes, which a test worker's tmp_path can pass
        import tempfile

        path = Path(tempfile.mkdtemp(prefix="s", dir="/tmp")) / "s.txt"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "socket":
        bound = socket.socket(socket.AF_UNIX)
        bound.bind(str(path))  # the file stays after the socket closes
        bound.close()
    else:
        path.mkdir()
    return path


KINDS = {"fifo": "a named pipe (FIFO)", "zero": "a character device (a symbolic link to /dev/zero)",
         "socket": "a socket", "directory": "a directory"}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_only_regular_files_are_read_and_the_refusal_names_the_path_and_what_it_is(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    expected = f"{path}: is {KINDS[kind]}, not a regular file"
    for attempt in (lambda: read_text(path), lambda: check_regular(path), lambda: text_lines(path).__enter__()):
        with pytest.raises(FormatError) as raised:
            attempt()  # a FIFO would block here for ever, /dev/zero would be read until memory ran out
        assert str(raised.value).startswith(expected)


def test_a_sparse_file_of_zeros_is_refused_at_its_first_line_without_reading_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "available_memory", lambda: None)  # the bound below is the line's, not memory's
    path = tmp_path / "dialog-babi-task1-API-calls-trn.txt"
    with open(path, "wb") as handle:
        handle.truncate(64 * 2**30)  # 64 GiB of NUL bytes that take no disk
    with pytest.raises(FormatError, match=rf"{path}:1: a NUL byte"):
        read_text(path)  # its first chunk
    with pytest.raises(FormatError, match=rf"{path}:1: a line longer than {MAX_LINE_BYTES:,} bytes"), \
            text_lines(path) as lines:
        next(lines)


def test_a_sparse_file_with_short_lines_is_refused_at_its_first_nul(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A newline every MiB kept each line under the bound, and validate read 50 GB of holes into memory."""
    monkeypatch.setattr(reading, "available_memory", lambda: None)
    path = tmp_path / "dialog-babi-kb-all.txt"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT)
    for k in range(4096):  # 4 GiB, a newline at the end of each MiB
        os.pwrite(descriptor, b"\n", k * 2**20 + 2**20 - 1)
    os.close(descriptor)
    with pytest.raises(FormatError, match=rf"{path}:1: a NUL byte"):
        read_text(path)
    with pytest.raises(FormatError, match=rf"{path}:1: a NUL byte"), text_lines(path) as lines:
        next(lines)


def test_a_file_larger_than_the_memory_available_is_refused_unread(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "available_memory", lambda: 10**6)
    path = tmp_path / "dialog-babi-task1-API-calls-trn.txt"
    path.write_text("1 hello\thi\n" * 100_000)  # 1.2 MB
    with pytest.raises(FormatError, match=rf"{path}: is 0.0 GB, more than the 0.0 GB of memory available"):
        read_text(path)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(lines=st.lists(st.integers(0, 12), max_size=12), final_newline=st.booleans(), chunk=st.integers(1, 9),
       limit=st.integers(1, 8))
@example(lines=[1, 6, 1], final_newline=False, chunk=9, limit=5)  # a long line wholly inside one chunk
@example(lines=[3, 4, 1], final_newline=True, chunk=2, limit=3)  # a long line carried over chunks
@example(lines=[1, 2, 7], final_newline=False, chunk=4, limit=6)  # a long last line, no newline after it
def test_the_line_bound_holds_across_chunks(lines: list[int], final_newline: bool, chunk: int, limit: int) -> None:
    """Lines of the given lengths, read in chunks of ``chunk`` bytes: refused exactly when one is over ``limit``,
    and named by its number; else the bytes come back whole."""
    import tempfile

    data = b"\n".join(b"x" * n for n in lines) + (b"\n" if final_newline and lines else b"")
    with tempfile.NamedTemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        original, reading._CHUNK = reading._CHUNK, chunk
        try:
            over = [number for number, n in enumerate(lines, start=1) if n > limit]
            if over:
                with pytest.raises(FormatError, match=rf":{over[0]}: a line longer than {limit} bytes"):
                    read_bytes(handle.name, max_line=limit)
            else:
                assert read_bytes(handle.name, max_line=limit) == data
        finally:
            reading._CHUNK = original


def test_streamed_lines_are_bounded_too(tmp_path: Path) -> None:
    path = tmp_path / "task1_qa_train.txt"
    path.write_text("1 short\n" + "1 " + "y" * (MAX_LINE_BYTES - 2) + "\n" + "z" * (MAX_LINE_BYTES + 1))
    with text_lines(path) as lines:
        assert len(next(lines)) == 8 and len(next(lines)) == MAX_LINE_BYTES + 1  # at the bound, and its newline
        with pytest.raises(FormatError, match=rf"{path}:3: a line longer"):
            next(lines)
