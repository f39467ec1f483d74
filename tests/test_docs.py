"""The docs' tables say where they came from: each Markdown table under docs/tables/ ends with the stamp of the
command that wrote it (its date and commit), so a table no `make tables` regenerates is still traceable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from models import provenance

TABLES = Path(__file__).resolve().parent.parent / "docs" / "tables"


@pytest.mark.parametrize("table", sorted(TABLES.glob("*.md")), ids=lambda path: path.name)
def test_every_table_is_stamped(table: Path) -> None:
    last = table.read_text().rstrip().splitlines()[-1]
    assert last.startswith("Written by `"), f"{table}: its last line is not a provenance stamp: {last[:80]!r}"


def test_backfill_stamps_from_the_history_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    table = tmp_path / "t.md"
    table.write_text("| a |\n| --- |\n| 1 |\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "t.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "t"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    monkeypatch.setattr(provenance, "REPOSITORY", tmp_path)
    assert provenance.backfill(table, "dialog benchmark --out t.md")
    assert not provenance.backfill(table, "dialog benchmark --out t.md")
    text = table.read_text()
    assert text.startswith("| a |\n| --- |\n| 1 |\n\n")
    assert text.count("Written by `dialog benchmark --out t.md`") == 1
    assert f"in commit {head}." in text


def test_backfill_refuses_a_file_no_commit_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    table = tmp_path / "t.md"
    table.write_text("| a |\n")
    monkeypatch.setattr(provenance, "REPOSITORY", tmp_path)
    with pytest.raises(ValueError, match="t.md: no commit holds it"):
        provenance.backfill(table, "x")
    assert table.read_text() == "| a |\n"
