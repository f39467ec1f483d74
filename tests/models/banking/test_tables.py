"""Tables 8-9 on a small banking corpus: both tables written, every cell a percentage, the OOP average the mean of
the OOP rows, turns counted."""

from __future__ import annotations

from pathlib import Path

from data.banking.labels import CHALLENGES
from models.banking.tables import run_banking_benchmark


def test_benchmark_writes_tables_8_and_9(banking, tmp_path: Path) -> None:
    _, files = banking
    results = run_banking_benchmark(files, tmp_path / "banking.md", epochs=1, progress=lambda _: None)
    text = (tmp_path / "banking.md").read_text()
    assert "Table 8" in text and "Table 9" in text and "| Turn Comp. OOT |" in text
    for templates in ("IT", "OOT"):
        for model in ("SMN", "MMN"):
            cells = [results.table8[(c, templates, model)] for c in CHALLENGES]
            assert all(0.0 <= value <= 100.0 for value in [*cells, results.table8[("none", templates, model)]])
            assert results.table8[("average", templates, model)] == round(sum(cells) / len(cells), 2)
    assert results.turns[("turn_compression", "IT", True)] >= 2 * 3  # twice per dialog, 3 dialogs
    assert (tmp_path / "banking.csv").read_text().startswith("table,test_case")

