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


def last_change(path: Path) -> tuple[str, str]:
    """(commit, committer date) of the last commit that changed ``path``: where a table written before tables were
    stamped came from."""
    out = subprocess.run(["git", "-C", str(REPOSITORY), "log", "-1", "--format=%h %cI", "--", str(path)],
                         capture_output=True, text=True, check=False, timeout=30).stdout.split()
    if len(out) != 2:
        raise ValueError(f"{path}: no commit holds it, so its provenance cannot be read from git")
    return out[0], out[1]


def backfill(path: Path, command: str) -> bool:
    """Append the stamp to a table that predates stamps, from the git history: the commit that last changed it and
    its date, said to be read afterwards (the code that computed it is that commit's parent or the commit itself).
    A table already stamped is left alone; returns whether it was stamped."""
    text = path.read_text()
    if "\nWritten by `" in text:
        return False
    at, when = last_change(path)
    line = (f"Written by `{command}`; stamped afterwards from the git history: last changed on {when} in commit "
            f"{at}.")
    path.write_text(f"{text.rstrip()}\n\n{line}\n")
    return True


def main(argv: list[str] | None = None) -> None:
    """``python -m models.provenance --command CMD TABLE...``: stamp tables written before stamps existed."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--command", required=True, help="the command that wrote the tables")
    parser.add_argument("tables", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for table in args.tables:
        print(f"{table}: {'stamped' if backfill(table, args.command) else 'already stamped'}")


if __name__ == "__main__":
    main()
