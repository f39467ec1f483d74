"""`dialog benchmark` writes Table 2 beside the paper's figures, as Markdown and CSV."""

from __future__ import annotations

import csv
from pathlib import Path

from data.restaurant_corpus import GenerationPlan, generate
from models.benchmark import run_benchmark


def test_benchmark_writes_table2(tmp_path: Path) -> None:
    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=2, dialogs_per_split=10, tasks=(2, 4)), data, runner="local")
    out = tmp_path / "results.md"
    cells = run_benchmark(data, out, methods=["rule_based", "nearest_neighbour", "embeddings"],
                          progress=lambda line: None)
    assert len(cells) == 2 * 2 * 3  # tasks x test splits x methods
    table = out.read_text()
    assert "| T2 | **100.0** (100.0) · paper 100 (100) |" in table
    assert "| T4 (OOV) |" in table and "n/a · paper 57 (0)" in table  # embeddings not built: said, not hidden
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert {(r["row"], r["method"]) for r in rows} >= {("T2", "rule_based"), ("T4 (OOV)", "nearest_neighbour")}
    assert all(r["per_response_accuracy"] == "" for r in rows if r["method"] == "embeddings")
