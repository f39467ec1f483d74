"""The paper's findings checked on a Tables 8-9 CSV: a direction counts only beyond one standard deviation of both
cells, and the verdict is computed, never typed."""

from __future__ import annotations

from pathlib import Path

from models.banking.findings import Cell, direction, format_findings, read_cells


def test_a_direction_counts_only_beyond_the_spread_of_both_cells() -> None:
    assert direction(Cell(90.0, 1.0, None), Cell(85.0, 1.0, None)) == "holds"
    assert direction(Cell(90.0, 3.0, None), Cell(85.0, 3.0, None)) == "within the spread"
    assert direction(Cell(80.0, 1.0, None), Cell(85.0, 1.0, None)) == "reversed"


def test_each_finding_is_judged_from_the_table(tmp_path: Path) -> None:
    rows = ["table,test_case,templates,model,per_response_accuracy,sd,seeds,paper"]
    cases = ("none", "turn_compression", "new_api", "reordering", "another_slot", "audit_more", "average")
    for column in ("IT", "OOT"):
        for model, base in (("SMN", 50.0), ("MMN", 60.0), ("Ours", 70.0)):
            for offset, case in enumerate(cases):
                value = 1.0 if case == "new_api" else base + offset
                rows.append(f"8,{case},{column},{model},{value},0.5,5,{'' if model == 'Ours' else 10 + offset}")
            rows += [f"9,audit_more,{column},{model},{base - 20},0.5,5,1",
                     f"9,turn_compression,{column},{model},1,0,5,1"]
        rows.append(f"8,routing,{column},MMN,99.0,0.1,5,")
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    text = format_findings(read_cells(tmp_path / "t.csv"), "docs/tables/t.csv")
    verdicts = [line.rsplit("|", 2)[-2].strip() for line in text.splitlines()[2:7]]
    # MMN above SMN everywhere, beyond the spread: 1 and 2 hold, 3 (SMN above MMN) is reversed; new API the lowest
    # of every column; audit more twice below once.
    assert verdicts == ["Yes", "Yes", "No (4 reversed, of 4 cells)", "Yes", "Yes"]
    assert "- Table 8's cells within 10 points of the paper's: 0 of 28." in text
    assert "(t.csv)" not in text and "[t.csv](tables/t.csv)" in text
