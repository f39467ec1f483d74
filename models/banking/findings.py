"""The paper's findings (Majumdar et al., Tables 8-9) checked on the CSV ``dialog benchmark`` writes, so that
docs/banking.md states whether each is reproduced from the figures themselves, never typing one.

A finding holds in a column (IT or OOT) when its direction holds beyond one standard deviation of both cells: the
higher cell's mean less its deviation above the lower cell's mean plus its deviation; "reversed" when the other
way holds so; otherwise "within the spread".

    python -m models.banking.findings docs/tables/banking-tables8-9.csv docs/banking.md \
        --departures docs/tables/banking-reading-*.csv

``--departures`` also checks each finding on tables whose corpora read the paper otherwise
(``dialog generate banking --reading``): the finding the audit says the reading's detail most likely breaks.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from models.doc_blocks import write_block

COLUMNS = ("IT", "OOT")
OOP_CASES = ("turn_compression", "new_api", "reordering", "another_slot", "audit_more")
TITLES = {"none": "non-OOP", "turn_compression": "turn compression", "new_api": "new API", "reordering": "reordering",
          "another_slot": "another slot", "audit_more": "audit more", "average": "OOP average"}
START, END = "<!-- BANKING FINDINGS -->", "<!-- /BANKING FINDINGS -->"
DEPARTURES_START, DEPARTURES_END = "<!-- BANKING DEPARTURES -->", "<!-- /BANKING DEPARTURES -->"
# The finding each reading of data/banking/readings.py is a test of (docs/banking-audit.md's rows 4, 15-16, 14, 18).
TESTED_BY = {"declines": 2, "reordering": 3, "another_slot": 3, "new_api": 4, "multiple_scored": 5}


@dataclass(frozen=True)
class Cell:
    mean: float
    sd: float
    paper: float | None

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.sd:.2f}"


Cells = dict[tuple[str, str, str, str], Cell]  # (table, case, templates, model) -> cell


def read_cells(path: str | Path) -> Cells:
    with open(path, newline="") as handle:
        return {(row["table"], row["test_case"], row["templates"], row["model"]):
                Cell(float(row["per_response_accuracy"]), float(row["sd"] or 0),
                     float(row["paper"]) if row["paper"] else None) for row in csv.DictReader(handle)}


def read_readings(path: str | Path) -> dict:
    """The readings other than the defaults of the corpora a Tables 8-9 CSV comes from (none for an older CSV)."""
    with open(path, newline="") as handle:
        row = next(csv.DictReader(handle), {})
    return json.loads(row["readings"]) if row.get("readings") else {}


def direction(high: Cell, low: Cell) -> str:
    """``holds``, ``reversed`` or ``within the spread`` (the module's rule)."""
    if high.mean - high.sd > low.mean + low.sd:
        return "holds"
    if low.mean - low.sd > high.mean + high.sd:
        return "reversed"
    return "within the spread"


@dataclass(frozen=True)
class Comparison:
    """The paper's claim that ``high`` is above ``low`` on each of ``cases`` (Table ``table`` against Table
    ``against``'s same cell when ``against`` is given: the phenomenon twice against once)."""

    number: int
    claim: str
    cases: tuple[str, ...]
    high: str = "MMN"
    low: str = "SMN"
    table: str = "8"

    def rows(self, cells: Cells) -> tuple[str, str, str]:
        paper, ours, verdicts = [], [], []
        for case in self.cases:
            for column in COLUMNS:
                high, low = cells[(self.table, case, column, self.high)], cells[(self.table, case, column, self.low)]
                paper.append(f"{TITLES[case]} {column} {high.paper:g} vs {low.paper:g}")
                ours.append(f"{TITLES[case]} {column} {self.high} {high} vs {self.low} {low}")
                verdicts.append(direction(high, low))
        return "; ".join(paper), "; ".join(ours), _verdict(verdicts)


def _verdict(verdicts: Sequence[str]) -> str:
    held = sum(v == "holds" for v in verdicts)
    if held == len(verdicts):
        return "Yes"
    parts = ", ".join(f"{n} {kind}" for kind in ("holds", "within the spread", "reversed")
                      if (n := sum(v == kind for v in verdicts)))
    return ("Partly" if held else "No") + f" ({parts}, of {len(verdicts)} cells)"


def hardest(cells: Cells, case: str = "new_api") -> tuple[str, str, str]:
    """The paper's finding 4: ``case`` the hardest OOP case, its cell the lowest of each network's column."""
    ours, verdicts = [], []
    for model in ("SMN", "MMN"):
        for column in COLUMNS:
            column_cells = {c: cells[("8", c, column, model)] for c in OOP_CASES}
            target = column_cells[case]
            others = [cell for c, cell in column_cells.items() if c != case]
            lowest = min(column_cells, key=lambda c: column_cells[c].mean)
            ours.append(f"{model} {column} {target}" + ("" if lowest == case else
                                                         f" (lower: {TITLES[lowest]} {column_cells[lowest]})"))
            # Below every other case beyond the spread; reversed when another is below it beyond the spread.
            verdicts.append("holds" if all(direction(other, target) == "holds" for other in others) else
                            "reversed" if any(direction(target, other) == "holds" for other in others) else
                            "within the spread")
    paper = ", ".join(f"{cells[('8', case, column, model)].paper:g}" for model in ("SMN", "MMN") for column in COLUMNS)
    return f"{TITLES[case]} {paper}", "; ".join(ours), _verdict(verdicts)


def twice(cells: Cells) -> tuple[str, str, str]:
    """The paper's finding 5: the phenomenon twice (Table 9) lowers audit more below once (Table 8)."""
    paper, ours, verdicts = [], [], []
    for model in ("SMN", "MMN"):
        for column in COLUMNS:
            once, two = cells[("8", "audit_more", column, model)], cells[("9", "audit_more", column, model)]
            paper.append(f"{model} {column} {two.paper:g} vs {once.paper:g}")
            ours.append(f"{model} {column} twice {two} vs once {once}")
            verdicts.append(direction(once, two))
    return "; ".join(paper), "; ".join(ours), _verdict(verdicts)


FINDINGS = (
    Comparison(1, "MMN slightly above SMN on the non-OOP tests", ("none",)),
    Comparison(2, "MMN far above SMN on turn compression and audit more", ("turn_compression", "audit_more")),
    Comparison(3, "SMN above MMN on reordering and another slot", ("reordering", "another_slot"), "SMN", "MMN"),
)


CLAIMS = {**{finding.number: finding.claim for finding in FINDINGS}, 4: "New API the hardest case",
          5: "The phenomenon twice (Table 9) lowers audit more"}


def check(number: int, cells: Cells) -> tuple[str, str, str]:
    """Finding ``number`` on ``cells``: the paper's figures, ours, and the verdict."""
    if number == 4:
        return hardest(cells)
    if number == 5:
        return twice(cells)
    return FINDINGS[number - 1].rows(cells)


def format_departures(default: Cells, variants: Sequence[tuple[str, dict, Cells]]) -> str:
    """For each table read otherwise (its source, readings, cells), each finding one of its readings tests: the
    verdict by default and under the reading, and what that says."""
    lines = ["| # | The paper says | Reading tested | Ours by default | Ours under the reading | Result |",
             "| --- | --- | --- | --- | --- | --- |"]
    for source, readings, cells in variants:
        for number in sorted({TESTED_BY[name] for name in readings}):
            named = ", ".join(f"`{name}={value}`" for name, value in readings.items() if TESTED_BY[name] == number)
            _, ours, verdict = check(number, cells)
            result = ("reproduced when " if verdict == "Yes" else "partly reproduced when " if
                      verdict.startswith("Partly") else "not reproduced, and not by ") + named
            link = f"[{Path(source).name}]({Path(source).as_posix().removeprefix('docs/')})"
            lines.append(f"| {number} | {CLAIMS[number]} | {named} ({link}) | {check(number, default)[2]} | "
                         f"{ours}: {verdict} | {result} |")
    return "\n".join([*lines, "", "Written by `python -m models.banking.findings ... --departures` from each table's "
                      "CSV; the same rule as above (a direction holds beyond one standard deviation of both cells)."])


def format_findings(cells: Cells, source: str) -> str:
    """The findings table and the figures the page discusses beside it (routing, ours, cells near the paper's)."""
    lines = ["| # | The paper says | The paper's figures | Ours (mean ± standard deviation over the seeds) | "
             "Reproduced? |", "| --- | --- | --- | --- | --- |"]
    for finding in FINDINGS:
        lines.append(f"| {finding.number} | {finding.claim} | " + " | ".join(finding.rows(cells)) + " |")
    lines += [f"| {number} | {CLAIMS[number]} | " + " | ".join(check(number, cells)) + " |" for number in (4, 5)]
    near = [cell for (table, case, _, model), cell in cells.items() if table == "8" and cell.paper is not None
            and model in ("SMN", "MMN")]
    close = sum(abs(cell.mean - cell.paper) <= 10 for cell in near)
    routing = ", ".join(f"{column} {cells[('8', 'routing', column, 'MMN')]}" for column in COLUMNS)
    ours = "; ".join(f"{TITLES[case]} " + ", ".join(f"{column} {cells[('8', case, column, 'Ours')]}"
                                                   for column in COLUMNS)
                     for case in ("none", *OOP_CASES, "average"))
    return "\n".join([*lines, "",
                      f"- Table 8's cells within 10 points of the paper's: {close} of {len(near)}.",
                      f"- MMN's selector, test dialogs routed to their intent (%): {routing}.",
                      f"- Ours, the state ranker (Table 8): {ours}.",
                      "", f"Written by `python -m models.banking.findings` from [{Path(source).name}]"
                      f"({Path(source).as_posix().removeprefix('docs/')}); a direction holds when it holds beyond one "
                      "standard deviation of both cells."])


def main(argv: Sequence[str] | None = None) -> None:
    """``make tables``: the findings of a Tables 8-9 CSV written between their markers in a document."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m models.banking.findings", description=main.__doc__)
    parser.add_argument("table", help="the Tables 8-9 CSV")
    parser.add_argument("document", help="the document whose findings block (between its markers) is rewritten")
    parser.add_argument("--departures", nargs="+", default=[], metavar="CSV",
                        help="Tables 8-9 CSVs of corpora read otherwise: their block is rewritten too")
    args = parser.parse_args(argv)
    if read_readings(args.table):
        parser.error(f"{args.table} comes from corpora read otherwise: the findings are checked on the defaults")
    variants = [(path, read_readings(path), read_cells(path)) for path in args.departures]
    if not all(readings for _, readings, _ in variants):
        parser.error("each --departures CSV must come from corpora read otherwise (its readings column)")
    cells = read_cells(args.table)
    write_block(args.document, START, END, format_findings(cells, args.table))
    if variants:
        write_block(args.document, DEPARTURES_START, DEPARTURES_END, format_departures(cells, variants))


if __name__ == "__main__":
    main()
