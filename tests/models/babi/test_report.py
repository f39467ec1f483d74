"""Table 2's report: the Markdown table beside the paper's figures, the CSV, and the README's headline read back
from the CSV."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.babi.report import Cell, format_csv, format_markdown, write_headline


@pytest.fixture
def cells() -> list[Cell]:
    return [Cell("T1", "memn2n_match", 99.5, 90.0, 1.0, "best epoch 3/30 on dev"),
            Cell("T1 (OOV)", "memn2n_match", 96.25, 0.0, 1.0, "best epoch 3/30 on dev"),
            Cell("T1", "template_memn2n", 100.0, 100.0, 1.0),
            Cell("T6 (dev)", "memn2n_match", 50.0, 0.0, 1.0)]


def test_the_table_puts_ours_beside_the_papers(cells: list[Cell]) -> None:
    table = format_markdown(cells)
    assert "| T1 | **99.5** (90.0) · paper 100 (100) | **100.0** (100.0) |" in table
    assert "| T1 (OOV) | **96.2** (0.0) · paper 96.5 (82.7) | not run |" in table
    assert "- T1 MemN2N (+ match type): best epoch 3/30 on dev" in table


def test_the_headline_is_read_back_from_the_csv_between_its_markers(cells: list[Cell], tmp_path: Path) -> None:
    table = tmp_path / "babi-table2.csv"
    table.write_text(format_csv(cells))
    readme = tmp_path / "README.md"
    readme.write_text("# title\n\n<!-- HEADLINE TABLE -->\n\nafter\n")
    write_headline(table, readme)
    write_headline(table, readme)  # again: the markers are kept, the table replaced, not added twice
    text = readme.read_text()
    assert text.count("<!-- HEADLINE TABLE -->") == 1 and text.count("<!-- /HEADLINE TABLE -->") == 1
    assert "| T1 | 99.5 (100) | 100.0 |" in text and "| T1 (OOV) | 96.2 (96.5) | not run |" in text
    assert "T6 (dev)" not in text and text.endswith("after\n")
    with pytest.raises(ValueError, match="no <!-- HEADLINE TABLE --> line"):
        write_headline(table, table)


def test_the_cells_below_the_paper_are_read_from_the_csv(tmp_path) -> None:
    from models.babi.report import format_below_paper

    table = tmp_path / "t.csv"
    table.write_text("row,method,per_response_accuracy,per_dialog_accuracy,paper_per_response,paper_per_dialog,seconds,"
                     "note,per_response_spread,by_kind\n"
                     "T1 (dev),memn2n,99.6,99,100,100,1,,,\n"    # within 0.5 of the paper: not listed
                     "T3 (dev),memn2n,74.3,0,74.9,0,1,,,\n"      # 0.6 short: listed
                     "T4 (dev),tfidf,8.8,0,,,1,,,\n")           # no paper figure: not counted
    text = format_below_paper(table).splitlines()
    assert text[0] == "1 of the 2 cells with a paper figure are at or above it less 0.5; the others:"
    assert text[4] == "| MemN2N (no match type) T3 (dev) | 74.3 | 74.9 |" and len(text) == 7
