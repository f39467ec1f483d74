"""Where a result came from: the commit of the code that computed it and when, for the tables' CSVs and their
Markdown (a table assembled from runs of several days says which run gave each cell)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def commit() -> str:
    """The short hash of the checkout's HEAD, with ``+`` when files differ from it (a run from a dirty tree); or
    ``unknown`` outside a git checkout (an installed copy)."""
    try:
        head = subprocess.run(["git", "-C", str(REPOSITORY), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPOSITORY), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+" if dirty else "")


def now() -> str:
    """The time, UTC, to the second (ISO 8601): runs of one day stay in order."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def stamp(command: str = "dialog benchmark", when: str | None = None, at: str | None = None) -> str:
    """The line a table's Markdown ends with: which command wrote it, when and at which commit (``when`` and ``at``:
    those a caller already read for the table's CSV), so a table that ``make tables`` does not regenerate still
    says where it came from."""
    return f"Written by `{command}` on {when or now()} at commit {at or commit()}."
