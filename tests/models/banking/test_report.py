"""Tables 8-9 as Markdown and CSV: each cell ours beside the paper's, n/a where no turn was scored, the CSV one row
per cell with the paper's figure."""

from __future__ import annotations

import csv
import io

from data.banking.labels import CHALLENGES
from models.banking.report import BankingResults, format_banking_csv, format_banking_markdown


def results() -> BankingResults:
    table8 = {(c, t, m): 50.0 for c in ("none", *CHALLENGES, "average") for t in ("IT", "OOT") for m in ("SMN", "MMN")}
    table8[("new_api", "OOT", "MMN")] = None
    table9 = {("turn_compression", "IT", "SMN"): 12.5, ("turn_compression", "IT", "MMN"): 25.0}
    turns = {("none", "IT", False): 40, ("none", "OOT", False): 41, ("turn_compression", "IT", True): 6}
    return BankingResults(table8, table9, turns, {"SMN": 1.0, "MMN": 2.0}, ["SMN: a note", "MMN: another"])


def test_markdown_puts_ours_beside_the_paper_and_says_n_a() -> None:
    lines = format_banking_markdown(results()).splitlines()
    assert "| Non OOP | **50.00** · paper 88.62 | **50.00** · paper 90.17 | **50.00** · paper 87.39 | " \
           "**50.00** · paper 88.27 | 40 / 41 |" in lines
    assert "| New API | **50.00** · paper 7.42 | **50.00** · paper 7.83 | **50.00** · paper 8.17 | " \
           "n/a · paper 6.67 | 0 / 0 |" in lines
    assert "| Turn Comp. | **12.50** · paper 29.61 | **25.00** · paper 55.16 | 6 |" in lines
    assert "| Audit More OOT | n/a · paper 10.90 | n/a · paper 15.43 | 0 |" in lines
    assert lines[-2:] == ["- SMN: a note", "- MMN: another"]


def test_csv_has_a_row_per_cell_with_the_papers_figure() -> None:
    rows = list(csv.reader(io.StringIO(format_banking_csv(results()))))
    assert rows[0] == ["table", "test_case", "templates", "model", "per_response_accuracy", "sd", "seeds", "paper",
                       "readings"]
    assert ["8", "new_api", "OOT", "MMN", "", "", "1", "6.67", ""] in rows
    assert ["8", "average", "IT", "MMN", "50.0", "", "1", "33.47", ""] in rows
    assert ["9", "turn_compression", "IT", "SMN", "12.5", "", "1", "29.61", ""] in rows
    assert len(rows) == 1 + 7 * 4 + 2


def test_a_corpus_read_otherwise_says_so_in_both_files() -> None:
    read = results()
    read.readings = {"new_api": "one_call", "declines": 0.5}
    assert "read the paper otherwise in `new_api=one_call`, `declines=0.5` (data/banking/readings.py)" in \
        format_banking_markdown(read)
    rows = list(csv.reader(io.StringIO(format_banking_csv(read))))
    assert {row[-1] for row in rows[1:]} == {'{"declines": 0.5, "new_api": "one_call"}'}
    assert "otherwise" not in format_banking_markdown(results())


def test_several_seeds_give_mean_and_spread() -> None:
    many = results()
    many.seeds = 5
    many.spread8 = {("none", "IT", "SMN"): 1.25}
    many.table8[("routing", "IT", "MMN")] = 99.5
    many.spread8[("routing", "IT", "MMN")] = 0.5
    text = format_banking_markdown(many)
    assert "over 5 seeds (corpus and training)" in text
    assert "| Non OOP | **50.00** ± 1.25 · paper 88.62 | **50.00** · paper 90.17 |" in text
    assert "| MMN dialogs routed to their intent |  | **99.50** ± 0.50 |  | n/a | |" in text
    assert ["8", "none", "IT", "SMN", "50.0", "1.25", "5", "88.62", ""] in list(csv.reader(io.StringIO(
        format_banking_csv(many))))
