"""A pipeline root's ML Metadata store (``ROOT/metadata/metadata.db``, SQLite), checked before TFX or the report
opens it.

A store cut short (a full disk, a copy interrupted, a crash mid-write) otherwise ends ``dialog pipeline`` and
``dialog report`` in a traceback of MLMD's own (``RuntimeError: ... database disk image is malformed``) that names
neither the file nor what to do. SQLite's ``quick_check`` reads every page of the file in a few milliseconds for a
pipeline's store, through a read-only connection, so the damaged root is never written to: the user may still want
to recover from it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

# SQLite's result codes for a file that is not (or no longer) a whole database.
_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


class MetadataDamaged(OSError):
    """The ML Metadata store of a pipeline root is damaged. An ``OSError`` without an errno, so that ``dialog`` says
    it in one line (``pipeline.cli.infra.file_system_error``)."""


def damage(path: Path) -> str | None:
    """What SQLite finds wrong with the database at ``path`` (its first complaint), or None when it is whole, absent,
    or cannot be judged here (locked by a running pipeline, say: TFX then reports that itself)."""
    if not path.is_file():
        return None
    uri = f"file:{quote(str(path.absolute()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        return None
    try:
        rows = connection.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as error:
        return str(error) if getattr(error, "sqlite_errorname", None) in _DAMAGED else None
    finally:
        connection.close()
    found = [str(row[0]) for row in rows if row and row[0] != "ok"]
    return found[0] if found else None


def check_metadata(path: Path) -> None:
    """Refuse a damaged ML Metadata store (``ROOT/metadata/metadata.db``) in one line naming the file and the
    remedy, before anything opens it for writing; nothing in the root is changed or removed."""
    problem = damage(Path(path))
    if problem is None:
        return
    root = Path(path).parent.parent
    raise MetadataDamaged(f"{path}: the pipeline's ML Metadata store is damaged ({problem}); {root} was left as it "
                          f"is: run dialog pipeline with a new --root, or move {root} aside and run it again")
