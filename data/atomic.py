"""Writes a reader never sees half of: a file or a directory is written under a temporary name beside its
destination, then renamed into place. On failure the temporary is removed and the destination keeps what it had.

One implementation for every writer of the project (corpora, tables, reports, heat maps, exported and pushed
models, the pipeline's artifacts), on the local disk by default and on any other file system through a
:class:`FileSystem` (``models.gfile.GFILE``: TensorFlow's, for ``gs://`` and the like). Temporary names are
``.NAME.tmp-XXXXXXXX`` and ``.NAME.old-XXXXXXXX``; :func:`clear_leftovers` removes those a killed run left (and,
beside a given NAME, the ``.NAME.tmp`` and ``.NAME.old`` that earlier versions of the export wrote), nothing else.

Removing never follows a symbolic link: an entry is inspected with ``lstat``, a link is unlinked itself and never
descended into, so a link planted under a leftover's name (or inside a directory being removed) costs its target
nothing. That holds whatever file system a caller passes: a local path is always removed here, not through
TensorFlow's file system, whose ``isdir`` and ``rmtree`` follow links. Object stores (``gs://``) have no links.
Lock files are opened with ``O_NOFOLLOW``: a link in a lock's place is refused, never written through.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import filecmp
import os
import posixpath
import re
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import IO, Protocol

_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?:tmp|old)-[0-9a-f]{8}")


class FileSystem(Protocol):
    def open(self, path: str, mode: str) -> IO: ...
    def exists(self, path: str) -> bool: ...
    def isdir(self, path: str) -> bool: ...
    def makedirs(self, path: str) -> None: ...
    def rename(self, source: str, target: str) -> None: ...  # replaces a file ``target``
    def remove(self, path: str) -> None: ...
    def rmtree(self, path: str) -> None: ...
    def listdir(self, path: str) -> list[str]: ...


class LocalFileSystem:
    """The local disk. A new file gets the usual mode (0666 less the umask), as ``open`` gives it."""

    def open(self, path: str, mode: str) -> IO:
        if mode == "wb":  # a new staging name: never through a link or a file planted under it
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
            return os.fdopen(descriptor, "wb")
        return open(path, mode)  # noqa: SIM115 (the caller closes it)

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path) and not os.path.islink(path)

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def rename(self, source: str, target: str) -> None:
        os.replace(source, target)

    def remove(self, path: str) -> None:
        os.remove(path)

    def rmtree(self, path: str) -> None:
        remove_entry(path)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)


LOCAL = LocalFileSystem()


def remove_entry(path: str | os.PathLike[str]) -> None:
    """Remove a local file, link or directory tree without following any link: a link (at ``path`` or inside the
    tree) is unlinked itself, its target untouched (``shutil.rmtree`` does not follow links inside a tree, and a
    link at the top is taken here before it could refuse one)."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _local_or(fs: FileSystem, path: str) -> FileSystem:
    """The file system that removes ``path`` without following links: this module's own for a local path."""
    return fs if "://" in path else LOCAL


def _split(path: str | os.PathLike[str]) -> tuple[str, str]:
    text = os.fspath(path).rstrip("/")
    parent, name = posixpath.split(text) if "://" in text else os.path.split(text)
    return parent or ".", name


def _join(directory: str, name: str) -> str:
    return (posixpath if "://" in directory else os.path).join(directory, name)


def _sibling(path: str | os.PathLike[str], kind: str) -> str:
    parent, name = _split(path)
    return _join(parent, f".{name}.{kind}-{uuid.uuid4().hex[:8]}")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], fs: FileSystem = LOCAL) -> Iterator[IO[bytes]]:
    """A binary handle on a temporary file beside ``path``, renamed onto ``path`` when the block succeeds."""
    fs.makedirs(_split(path)[0])
    staging = _sibling(path, "tmp")
    try:
        with fs.open(staging, "wb") as handle:
            yield handle
        fs.rename(staging, os.fspath(path))
    except BaseException:
        if fs.exists(staging):
            fs.remove(staging)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str, fs: FileSystem = LOCAL) -> None:
    """Write ``text`` as UTF-8 to ``path`` through a temporary file and a rename."""
    with atomic_output(path, fs) as handle:
        handle.write(text.encode("utf-8"))


def replace_directory(path: str | os.PathLike[str], write: Callable[[str], None], fs: FileSystem = LOCAL) -> None:
    """``write(staging)`` fills a new directory beside ``path``; then it takes ``path``'s place (a directory
    already there is renamed aside first and removed once the new one is in)."""
    parent, name = _split(path)
    if name in ("", ".", ".."):
        raise ValueError(f"{os.fspath(path)!r}: not a directory name that can be replaced")
    fs.makedirs(parent)
    staging = _sibling(path, "tmp")
    try:
        write(staging)
    except BaseException:
        if fs.exists(staging):
            _local_or(fs, staging).rmtree(staging)
        raise
    target = os.fspath(path).rstrip("/")
    if not fs.exists(target):
        fs.rename(staging, target)
        return
    old = _sibling(path, "old")
    fs.rename(target, old)
    fs.rename(staging, target)
    _local_or(fs, old).rmtree(old)  # a link the user made the output was renamed aside: unlinked, target kept


def clear_leftovers(directory: str | os.PathLike[str], name: str | None = None, fs: FileSystem = LOCAL) -> list[str]:
    """Remove the temporary files and directories a killed write left in ``directory`` (those of ``name`` only,
    when given); returns their names."""
    directory = os.fspath(directory)
    fs = _local_or(fs, directory)
    if not fs.exists(directory):
        return []
    removed = []
    for entry in fs.listdir(directory):
        entry = entry.rstrip("/")
        match = _LEFTOVER.fullmatch(entry)
        if (match and (name is None or match["name"] == name)) or (name and entry in (f".{name}.tmp", f".{name}.old")):
            full = _join(directory, entry)
            if fs.isdir(full):
                fs.rmtree(full)
            else:
                fs.remove(full)
            removed.append(entry)
    return removed


class DirectoryBusy(OSError):
    """Another process is writing the directory (it holds :func:`one_writer`'s lock), or, to a writer, reading it
    (:func:`one_reader`)."""


class UnsafePath(OSError):
    """A path the project writes is a symbolic link it did not make (a lock file's place): refused, not followed."""


def _flock(descriptor: int, output: str, wait: bool) -> None:
    import fcntl

    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        try:  # only readers hold it when a shared lock is still to be had
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DirectoryBusy(f"{output} is being written by another process; wait for it to finish, or write "
                                "elsewhere") from None
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        raise DirectoryBusy(f"{output} is being read by another process (validate, stats, show, train, evaluate, "
                            "benchmark or pipeline); wait for it to finish, or write elsewhere") from None


@contextlib.contextmanager
def one_reader(directory: str | os.PathLike[str]) -> Iterator[None]:
    """A shared advisory lock on a directory for as long as the block runs: readers of a corpus never see one a
    writer (:func:`one_writer`: generate, convert) is replacing, and a writer waits for none of them but is refused
    while any reads. Readers do not exclude one another. A writer already there is :class:`DirectoryBusy`. A
    directory that cannot be opened or locked (a URL, a file system without ``flock``, a directory the user may
    enter but not list) is read without the lock: reading must work wherever the files can be read, a read-only
    mount included."""
    import fcntl

    path = os.fspath(directory)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) if "://" not in path else None
    except OSError:
        descriptor = None
    if descriptor is None:
        yield
        return
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DirectoryBusy(f"{path} is being written by another process (generate or convert); wait for it to "
                                "finish") from None
        except OSError:  # no locks on this file system
            pass
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def one_writer(directory: str | os.PathLike[str], wait: bool = False) -> Iterator[None]:
    """An exclusive advisory lock on the directory itself (``flock`` on its descriptor, so no lock file is left in
    it) for as long as the block runs: two writers of one corpus, pipeline root or serving directory never mix
    their output. The second one waits (``wait``) or gets :class:`DirectoryBusy` naming the directory. The
    directory is created if missing. A URL (``gs://``) has no such lock: one writer there."""
    path = os.fspath(directory)
    if "://" in path:
        yield
        return
    os.makedirs(path, exist_ok=True)
    descriptor = os.open(path, os.O_RDONLY)
    try:
        _flock(descriptor, path, wait)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


@contextlib.contextmanager
def one_writer_of(output: str | os.PathLike[str], wait: bool = False) -> Iterator[None]:
    """:func:`one_writer` for an output that is replaced whole by a rename (a trained model's directory, a table
    and its CSV): a lock on the output itself would go aside with it, so the lock is the file ``.NAME.lock`` beside
    it, removed by its holder when the block ends. A writer that locked a file its previous holder had just
    removed tries again on the new one, so two writers never both hold the lock."""
    path = os.fspath(output)
    if "://" in path:
        yield
        return
    parent, name = _split(path)
    os.makedirs(parent, exist_ok=True)
    lock = _join(parent, f".{name}.lock")
    while True:
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            raise UnsafePath(f"{lock} is a symbolic link, not a lock file of this project; remove it, or write "
                                "elsewhere") from None
        try:
            _flock(descriptor, path, wait)
            with contextlib.suppress(FileNotFoundError):
                if os.stat(lock).st_ino == os.fstat(descriptor).st_ino:
                    break
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):  # removed by hand meanwhile: nothing left to tidy
            os.remove(lock)  # before the lock is released: a writer waiting on this file then sees it gone
        os.close(descriptor)


STAGING_PREFIX = ".staging-"

# The files a staged write replaced, for whoever asked to hear of it (:func:`recording_replacements`).
_REPLACED: contextvars.ContextVar[list[tuple[str, bool]] | None] = contextvars.ContextVar("replaced", default=None)


@contextlib.contextmanager
def recording_replacements() -> Iterator[list[tuple[str, bool]]]:
    """A list that :func:`staged_files` fills, while the block runs, with each existing file it replaced: (its
    path, whether its content changed). A command says what it wrote over, so a corpus of another seed or size
    replaced in place is never silent."""
    replaced: list[tuple[str, bool]] = []
    token = _REPLACED.set(replaced)
    try:
        yield replaced
    finally:
        _REPLACED.reset(token)


def real_directory(root: str | os.PathLike[str], *parts: str) -> str:
    """``root/parts...``, each folder below ``root`` made where missing and refused (:class:`UnsafePath`) where a
    symbolic link stands in its place: a link planted at a folder the project writes into (a corpus's task folder,
    a pipeline root's report) would send its files into the link's target. ``root`` itself is the user's choice
    and may be a link."""
    path = os.fspath(root)
    for part in parts:
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise UnsafePath(f"{path} is a symbolic link where this command writes a folder of its own; remove it, or "
                             "write elsewhere")
        os.makedirs(path, exist_ok=True)
    return path


def _record_replacement(source: str, target: str) -> None:
    replaced = _REPLACED.get()
    if replaced is not None and os.path.lexists(target):
        same = os.path.isfile(target) and not os.path.islink(target) and filecmp.cmp(source, target, shallow=False)
        replaced.append((target, not same))


@contextlib.contextmanager
def staged_files(out: str | os.PathLike[str]) -> Iterator[str]:
    """A staging directory inside the local directory ``out`` to write a set of files into (a corpus: every split
    and the KB they share). When the block ends without an error each file is renamed to its place in ``out``
    (subdirectories kept); a failure part way (a full disk, a bad input) leaves ``out`` as it was. The caller holds
    :func:`one_writer` on ``out``; holding it, staging a killed run left there is removed first."""
    out = os.fspath(out)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.startswith(STAGING_PREFIX):
            with contextlib.suppress(OSError):
                remove_entry(os.path.join(out, name))
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out)
    try:
        yield staging
        moves = [(os.path.join(directory, name), os.path.relpath(os.path.join(directory, name), staging))
                 for directory, _, names in os.walk(staging) for name in sorted(names)]
        for folder in sorted({os.path.dirname(relative) for _, relative in moves} - {""}):
            real_directory(out, *folder.split(os.sep))  # every folder checked before any file moves: all or nothing
        for source, relative in moves:
            target = os.path.join(out, relative)
            _record_replacement(source, target)
            os.replace(source, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
