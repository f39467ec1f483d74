"""docs/babi.md's task-6 block: estimates read from the benchmark's CSVs, the held-back figures beside them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from models.babi import task6_report
from models.babi.paper import HELD_BACK_TASK6, HELD_BACK_TASK6_KINDS

FIELDS = ["row", "method", "per_response_accuracy", "per_dialog_accuracy", "paper_per_response", "paper_per_dialog",
          "seconds", "note", "per_response_spread", "by_kind", "decided_by_kind"]


def _table(path: Path, rows: list[tuple[str, str, float, float | None, dict[str, float]]]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        for row, method, accuracy, spread, kinds in rows:
            writer.writerow({"row": row, "method": method, "per_response_accuracy": accuracy,
                             "per_response_spread": "" if spread is None else spread,
                             "by_kind": json.dumps(kinds) if kinds else "",
                             "decided_by_kind": json.dumps({k: v + 40 for k, v in kinds.items()}) if kinds else ""})
    return path


def test_the_block_reads_each_method_once_and_sets_the_test_beside_it(tmp_path: Path) -> None:
    first = _table(tmp_path / "a.csv", [("T6 (folds)", "rule_based", 57.86, 1.56, {}),
                                        ("T6 (new bot)", "rule_based", 52.13, 5.93, {"no_match": 1.72}),
                                        ("T6 (dev)", "rule_based", 53.76, None, {})])
    second = _table(tmp_path / "b.csv", [("T6 (new bot)", "rule_based", 10.0, 1.0, {}),
                                         ("T6 (new bot)", "tfidf", 2.49, 0.5, {}),
                                         ("T1", "tfidf", 99.0, None, {})])
    block = task6_report.format_estimates([first, second])
    rules = next(line for line in block.splitlines() if "(`rule_based`)" in line)
    test = HELD_BACK_TASK6["rule_based"]
    expected = ["57.9 ±1.6", "52.1 ±5.9", "53.8", f"{test:g}", f"{52.13 - test:+.1f}"]
    assert [cell.strip() for cell in rules.split("|")][2:7] == expected
    tfidf = next(line for line in block.splitlines() if "(`tfidf`)" in line)
    assert [cell.strip() for cell in tfidf.split("|")][2:7] == ["", "2.5 ±0.5", "", "", ""]
    no_match = next(line for line in block.splitlines() if line.startswith("| no_match |"))
    assert f"1.7 (41.7) / {HELD_BACK_TASK6_KINDS['no_match'][1]['rule_based']}" in no_match
    assert "[a.csv](" in block and "[b.csv](" in block


def test_the_kinds_table_has_the_measured_models_and_hcn_as_it_is_now(tmp_path: Path) -> None:
    """The product as it is now beside the version the maintainers measured (its test cell empty); a method neither
    measured nor current stays out of the kinds table."""
    table = _table(tmp_path / "a.csv", [("T6 (new bot)", "hcn-ensemble", 55.7, 6.0, {"no_match": 2.5}),
                                        ("T6 (new bot)", "hcn-ensemble-no_kb_match", 55.2, 5.6, {"no_match": 1.2}),
                                        ("T6 (new bot)", "tfidf", 2.49, 0.5, {"no_match": 0.1})])
    block = task6_report.format_estimates([table])
    header = next(line for line in block.splitlines() if line.startswith("| kind |"))
    assert header.count("new bot (decision) / test") == 2 and "TF-IDF" not in header
    no_match = next(line for line in block.splitlines() if line.startswith("| no_match |"))
    assert [cell.strip() for cell in no_match.split("|")][3:5] == [
        "2.5 (42.5) /", f"1.2 (41.2) / {HELD_BACK_TASK6_KINDS['no_match'][1]['hcn-ensemble-no_kb_match']}"]


def test_a_table_without_task_6_is_named(tmp_path: Path) -> None:
    other = _table(tmp_path / "t1.csv", [("T1", "tfidf", 99.0, None, {})])
    with pytest.raises(ValueError, match="t1.csv: no task 6 row"):
        task6_report.format_estimates([other])


def test_main_writes_between_the_markers(tmp_path: Path) -> None:
    table = _table(tmp_path / "a.csv", [("T6 (dev)", "hcn", 65.69, None, {})])
    document = tmp_path / "doc.md"
    document.write_text(f"before\n{task6_report.START}\nOLD-CONTENT\n{task6_report.END}\nafter\n")
    task6_report.main([str(document), str(table)])
    text = document.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "OLD-CONTENT" not in text
    assert "| 65.7 |" in text
