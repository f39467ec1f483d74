"""The paper's findings checked on a Tables 8-9 CSV: a direction counts only beyond one standard deviation of both
cells, and the verdict is computed, never typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.banking.findings import Cell, direction, format_findings, main, read_cells


def test_a_direction_counts_only_beyond_the_spread_of_both_cells() -> None:
    assert direction(Cell(90.0, 1.0, None), Cell(85.0, 1.0, None)) == "holds"
    assert direction(Cell(90.0, 3.0, None), Cell(85.0, 3.0, None)) == "within the spread"
    assert direction(Cell(80.0, 1.0, None), Cell(85.0, 1.0, None)) == "reversed"


def _table(path: Path, new_api: float = 1.0, twice: float = -20, readings: str = "") -> Path:
    """A Tables 8-9 CSV where MMN is above SMN everywhere beyond the spread."""
    rows = ["table,test_case,templates,model,per_response_accuracy,sd,seeds,paper,readings"]
    cases = ("none", "turn_compression", "new_api", "reordering", "another_slot", "audit_more", "average")
    for column in ("IT", "OOT"):
        for model, base in (("SMN", 50.0), ("MMN", 60.0), ("Ours", 70.0)):
            for offset, case in enumerate(cases):
                value = new_api if case == "new_api" else base + offset
                rows.append(f"8,{case},{column},{model},{value},0.5,5,{'' if model == 'Ours' else 10 + offset},"
                            f"{readings}")
            rows += [f"9,audit_more,{column},{model},{base + twice},0.5,5,1,{readings}",
                     f"9,turn_compression,{column},{model},1,0,5,1,{readings}"]
        rows.append(f"8,routing,{column},MMN,99.0,0.1,5,,{readings}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_each_finding_is_judged_from_the_table(tmp_path: Path) -> None:
    _table(tmp_path / "t.csv")
    text = format_findings(read_cells(tmp_path / "t.csv"), "docs/tables/t.csv")
    verdicts = [line.rsplit("|", 2)[-2].strip() for line in text.splitlines()[2:7]]
    # MMN above SMN everywhere, beyond the spread: 1 and 2 hold, 3 (SMN above MMN) is reversed; new API the lowest
    # of every column; audit more twice below once.
    assert verdicts == ["Yes", "Yes", "No (4 reversed, of 4 cells)", "Yes", "Yes"]
    assert "- Table 8's cells within 10 points of the paper's: 0 of 28." in text
    assert "(t.csv)" not in text and "[t.csv](tables/t.csv)" in text


def test_each_reading_is_checked_against_the_finding_it_tests(tmp_path: Path) -> None:
    """A table read otherwise checks the findings its readings test (new API: 4; Table 9's scoring: 5), each
    verdict computed as the default table's; a table read by default is refused as a departure."""
    default = _table(tmp_path / "default.csv", new_api=90.0, twice=+20)
    read = _table(tmp_path / "read.csv", readings='"{""multiple_scored"": ""second"", ""new_api"": ""one_call""}"')
    document = tmp_path / "page.md"
    document.write_text("<!-- BANKING FINDINGS -->\n<!-- /BANKING FINDINGS -->\n"
                        "<!-- BANKING DEPARTURES -->\n<!-- /BANKING DEPARTURES -->\n")
    main([str(default), str(document), "--departures", str(read)])
    rows = [line for line in document.read_text().splitlines() if line.startswith(("| 4 |", "| 5 |"))][2:]
    assert [row.split(" | ")[2] for row in rows] == ["`new_api=one_call` ([read.csv](" + str(read) + "))",
                                                     "`multiple_scored=second` ([read.csv](" + str(read) + "))"]
    assert [row.rsplit(" | ", 1)[-1] for row in rows] == ["reproduced when `new_api=one_call` |",
                                                         "reproduced when `multiple_scored=second` |"]
    assert [row.split(" | ")[3] for row in rows] == ["No (4 reversed, of 4 cells)"] * 2
    with pytest.raises(SystemExit):
        main([str(default), str(document), "--departures", str(default)])
    with pytest.raises(SystemExit):
        main([str(read), str(document)])
    # Two readings testing one finding are named together; "not reproduced" and "partly" from the verdicts.
    joined = _table(tmp_path / "joined.csv", readings='"{""another_slot"": ""any_later_slot"", ""reordering"": '
                                                      '""every_request""}"')
    main([str(default), str(document), "--departures", str(joined)])
    (row,) = [line for line in document.read_text().splitlines() if line.startswith("| 3 |")][1:]
    assert row.endswith("| not reproduced, and not by `another_slot=any_later_slot`, `reordering=every_request` |")
    partly = tmp_path / "partly.csv"
    partly.write_text(joined.read_text().replace("8,reordering,IT,SMN,53.0", "8,reordering,IT,SMN,90.0"))
    main([str(default), str(document), "--departures", str(partly)])
    (row,) = [line for line in document.read_text().splitlines() if line.startswith("| 3 |")][1:]
    assert "Partly (1 holds, 3 reversed, of 4 cells)" in row and "| partly reproduced when `another_slot" in row
