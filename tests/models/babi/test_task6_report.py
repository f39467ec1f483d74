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


def _table(path: Path, rows: list[tuple], notes: dict[str, str] | None = None) -> Path:
    """A benchmark CSV of (row, method, accuracy, spread, kinds) rows; ``notes``: method -> its (new bot) note."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        for row, method, accuracy, spread, kinds in rows:
            writer.writerow({"row": row, "method": method, "per_response_accuracy": accuracy,
                             "note": (notes or {}).get(method, "") if row == "T6 (new bot)" else "",
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


def _styles_table(path: Path, figures: dict[str, list[float]]) -> Path:
    """The (new bot) rows of the measured methods, each run's figure at the end of its note as the benchmark
    writes it, the row's figure their mean."""
    return _table(path, [("T6 (new bot)", method, sum(runs) / len(runs), 1.0, {}) for method, runs in figures.items()],
                  {method: "mean over 3 held-out bot wording styles of trn, each chosen on a fifth of the others: "
                   + ", ".join(f"{run}" for run in runs) for method, runs in figures.items()})


def test_each_held_out_style_is_set_beside_the_test_method_by_method(tmp_path: Path) -> None:
    """A style's cell is its own figure less the test's, signed; the error column is the mean of their absolute
    values; the last row is the (new bot) row's mean. A method the maintainers did not measure stays out."""
    measured = list(HELD_BACK_TASK6)
    offsets = {"style 1": [3.0, -1.0, 2.0, -4.0, 5.0], "style 2": [-2.0, 0.5, 0.0, 1.5, -1.0],
               "style 3": [1.0, 1.0, -1.0, 1.0, -1.0]}
    figures = {method: [HELD_BACK_TASK6[method] + offsets[style][index] for style in offsets]
               for index, method in enumerate(measured)}
    figures["tfidf"] = [2.0, 3.0, 4.0]
    block = task6_report.format_styles([_styles_table(tmp_path / "a.csv", figures)])
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
            for line in block.splitlines() if line.startswith("| style") or line.startswith("| the styles")}
    assert rows["style 1"] == ["+3.00", "-1.00", "+2.00", "-4.00", "+5.00", "3.00"]
    assert rows["style 2"] == ["-2.00", "+0.50", "+0.00", "+1.50", "-1.00", "1.00"]
    mean = [sum(offsets[style][index] for style in offsets) / 3 for index in range(5)]
    assert rows["the styles averaged (the (new bot) row)"] == [
        *(f"{value:+.2f}" for value in mean), f"{sum(map(abs, mean)) / 5:.2f}"]
    assert "tfidf" not in block and all(f"`{method}`" in block for method in measured)


def test_the_per_run_figures_are_read_back_from_the_note_the_benchmark_writes() -> None:
    from models.babi.reproduce import held_out_note

    note = held_out_note("held-out bot wording styles of trn, each chosen on a fifth of the others: a", [57.83, 45.99])
    assert task6_report.held_out_figures({"method": "m", "row": "T6 (new bot)", "note": note}) == [57.83, 45.99]


def test_a_new_bot_note_without_its_runs_is_named(tmp_path: Path) -> None:
    table = _table(tmp_path / "a.csv", [("T6 (new bot)", "rule_based", 52.1, 5.9, {})], {"rule_based": "no runs"})
    with pytest.raises(ValueError, match="rule_based T6 \\(new bot\\): no per-run figures"):
        task6_report.format_styles([table])


def test_main_writes_between_the_markers(tmp_path: Path) -> None:
    table = _table(tmp_path / "a.csv", [("T6 (dev)", "hcn", 65.69, None, {})])
    styles = _styles_table(tmp_path / "b.csv", {"rule_based": [57.83, 45.99, 52.58]})
    document = tmp_path / "doc.md"
    document.write_text(f"before\n{task6_report.START}\nOLD-CONTENT\n{task6_report.END}\nbetween\n"
                        f"{task6_report.STYLES_START}\nOLD-STYLES\n{task6_report.STYLES_END}\nafter\n")
    task6_report.main([str(document), str(table), str(styles)])
    text = document.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "OLD-CONTENT" not in text
    assert "| 65.7 |" in text and "OLD-STYLES" not in text and "| style 2 | -2.91 | 2.91 |" in text
