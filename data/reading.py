"""Reads that cannot hang or run away: every corpus, KB, candidates, labels or model-asset file the project reads
goes through here.

Only regular files are read. A named pipe blocks its reader until some writer opens it (for ever, when none does),
and a device such as ``/dev/zero`` never ends; a socket cannot be read as a file at all. So a local path is opened
without blocking, checked with ``fstat`` on the descriptor it opened (a symbolic link is followed: what counts is
what the reader would get) and refused, in one line naming the path and what it is, unless it is a regular file.
Object stores (``gs://``, ``s3://``) hold only regular objects, so a URL is opened as given.

A line is at most :data:`MAX_LINE_BYTES` long, far past the longest line of any corpus the project reads
(docs/design.md has the measured ones), so a longer one is a damaged or foreign file (a sparse file of zeros, a
binary), named with its line, not a reason to hold gigabytes in memory.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Iterator
from typing import IO, Protocol

MAX_LINE_BYTES = 1 << 20  # a bound for damage, not for data: no corpus line comes near it (docs/design.md)
_CHUNK = 1 << 20


class FormatError(ValueError):
    """A file that does not follow the dialog-bAbI layout; names the file and, when known, the line."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class Opener(Protocol):
    """Anything with ``open(path, mode)``: ``data.atomic.FileSystem``, TensorFlow's or TFX's ``fileio``."""

    def open(self, path: str, mode: str) -> IO: ...


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def is_url(path: str | os.PathLike[str]) -> bool:
    return "://" in os.fspath(path)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a named pipe (FIFO)")."""
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def _not_regular(path: str | os.PathLike[str], mode: int) -> FormatError:
    link = ""
    with contextlib.suppress(OSError):
        if os.path.islink(path):
            link = f" (a symbolic link to {os.readlink(path)})"
    return FormatError(path, None, f"is {file_kind(mode)}{link}, not a regular file; only regular files are read")


def check_regular(path: str | os.PathLike[str]) -> None:
    """Refuse a local path that is not a regular file (or a link to one), without opening it: for a file another
    library will open (a SavedModel's assets, a JSON asset)."""
    if is_url(path):
        return
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise FormatError(path, None, f"cannot be read ({error.strerror or error})") from None
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode)


def open_regular(path: str | os.PathLike[str], fs: Opener | None = None) -> IO[bytes]:
    """A binary handle on ``path``, a regular file; anything else is a :class:`FormatError` naming it, raised
    before a read could block. A URL is opened through ``fs``."""
    if is_url(path):
        if fs is None:
            raise FormatError(path, None, "a URL needs a file system to read it (TensorFlow's gfile)")
        return fs.open(os.fspath(path), "rb")
    try:
        # O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer; a socket fails here (ENXIO)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        with contextlib.suppress(OSError):
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(path, mode) from None
        raise FormatError(path, None, f"cannot be read ({error.strerror or error})") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _too_long(path: str | os.PathLike[str], line: int, limit: int) -> FormatError:
    return FormatError(path, line, f"a line longer than {limit:,} bytes (damaged, or not a text file of the layout)")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux's MemAvailable), None where unknown."""
    with contextlib.suppress(OSError, ValueError, StopIteration), open("/proc/meminfo") as meminfo:
        return int(next(line for line in meminfo if line.startswith("MemAvailable:")).split()[1]) * 1024
    return None


NUL = "a NUL byte (0x00) inside the text"


def read_bytes(path: str | os.PathLike[str], fs: Opener | None = None, max_line: int = MAX_LINE_BYTES) -> bytes:
    """The whole of a regular file, refused before the rest is read at the first line longer than ``max_line`` or
    the first NUL byte (no text of the layout holds one; a sparse file's holes are all NULs), and refused unread
    when it is larger than the memory available to hold it."""
    chunks: list[bytes] = []
    line, carried = 1, 0  # the current line's number and the bytes of it read so far
    try:
        with open_regular(path, fs) as handle:
            size, available = (os.fstat(handle.fileno()).st_size if not is_url(path) else 0), available_memory()
            if available is not None and size > available:
                raise FormatError(path, None, f"is {size / 1e9:,.1f} GB, more than the {available / 1e9:,.1f} GB of "
                                              "memory available to read it")
            while chunk := handle.read(_CHUNK):
                if (nul := chunk.find(b"\0")) >= 0:
                    raise FormatError(path, line + chunk.count(b"\n", 0, nul), NUL)
                first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
                if first >= 0 and carried + first > max_line:
                    raise _too_long(path, line, max_line)
                if last - first > max_line + 1:  # room for a long line between them: split only then (C scans else)
                    inner = chunk[first + 1:last].split(b"\n")
                    longest = next((i for i, piece in enumerate(inner) if len(piece) > max_line), None)
                    if longest is not None:
                        raise _too_long(path, line + 1 + longest, max_line)
                line += chunk.count(b"\n")
                carried = len(chunk) - last - 1 + (carried if first < 0 else 0)
                if carried > max_line:
                    raise _too_long(path, line, max_line)
                chunks.append(chunk)
    except OSError as error:
        raise FormatError(path, None, f"cannot be read ({error.strerror or error})") from None
    return b"".join(chunks)


def bounded_lines(handle: IO[str], path: str | os.PathLike[str], max_line: int = MAX_LINE_BYTES,
                  sized: bool = True) -> Iterator[str]:
    """The lines of a text handle (newlines kept), refused at the first longer than ``max_line`` characters: a
    streamed reader's bound, for files too large to read whole. ``sized``: the handle's ``readline`` takes a size
    (Python's do; TensorFlow's GFile does not, so a remote line is checked once read)."""
    number = 0
    while line := (handle.readline(max_line + 1) if sized else handle.readline()):
        number += 1
        if len(line) > max_line and not (len(line) == max_line + 1 and line.endswith("\n")):
            raise _too_long(path, number, max_line)
        if "\0" in line:
            raise FormatError(path, number, NUL)
        yield line


@contextlib.contextmanager
def text_lines(path: str | os.PathLike[str], fs: Opener | None = None) -> Iterator[Iterator[str]]:
    """A regular file's lines as UTF-8 text, streamed and bounded (a paper-scale training file is gigabytes). A URL
    is read through ``fs`` in its text mode."""
    if is_url(path):
        if fs is None:
            raise FormatError(path, None, "a URL needs a file system to read it (TensorFlow's gfile)")
        handle: IO[str] = fs.open(os.fspath(path), "r")
    else:
        handle = io.TextIOWrapper(open_regular(path), encoding="utf-8")
    with handle:
        try:
            yield bounded_lines(handle, path, sized=not is_url(path))
        except UnicodeDecodeError as error:
            raise FormatError(path, None, f"not UTF-8 text ({error.reason})") from None
