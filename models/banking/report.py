"""Tables 8 and 9 as Markdown and CSV: our figures beside the paper's, the turns each row counts, and the notes on
how each network was chosen."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from data.atomic import write_text_atomic
from data.banking.labels import CHALLENGES, NONE
from models.banking.paper import CHALLENGE_TITLES, PAPER_TABLE8, PAPER_TABLE9

# Table 8's columns, in the order of the paper's figures (PAPER_TABLE8).
TABLE8_COLUMNS = (("IT", "SMN"), ("IT", "MMN"), ("OOT", "SMN"), ("OOT", "MMN"))
TABLE9_COLUMNS = ("SMN", "MMN")


@dataclass
class BankingResults:
    table8: dict[tuple[str, str, str], float | None]  # (challenge or "average", IT|OOT, SMN|MMN)
    table9: dict[tuple[str, str, str], float | None]  # (challenge, IT|OOT, SMN|MMN)
    turns: dict[tuple[str, str, bool], int]  # (challenge, IT|OOT, multiple)
    seconds: dict[str, float]
    notes: list[str]


def _cell(value: float | None, paper: float | None) -> str:
    ours = "n/a" if value is None else f"**{value:.2f}**"
    return ours + (f" · paper {paper:.2f}" if paper is not None else "")


def format_banking_markdown(results: BankingResults) -> str:
    lines = ["Table 8: per-response accuracy % on the banking self-play tests; ours, then the paper's.",
             "Non OOP: every bot turn of the non-OOP test dialogs. OOP rows: the bot turns answering the phenomenon. "
             "Our corpus comes from our own generator and templates, so the figures compare in shape, not value.",
             "", "| Test case | IT SMN | IT MMN | OOT SMN | OOT MMN | turns (IT / OOT) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for challenge in (NONE, *CHALLENGES, "average"):
        title = CHALLENGE_TITLES.get(challenge, "OOP Avg.")
        paper = PAPER_TABLE8[challenge]
        cells = [_cell(results.table8.get((challenge, t, m)), paper[i]) for i, (t, m) in enumerate(TABLE8_COLUMNS)]
        counts = "" if challenge == "average" else \
            f"{results.turns.get((challenge, 'IT', False), 0)} / {results.turns.get((challenge, 'OOT', False), 0)}"
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {counts} |")
    lines += ["", "Table 9: multiple out-of-pattern dialogs (the phenomenon twice), per-response accuracy % on the "
                  "bot turns answering it.", "", "| Test case | SMN | MMN | turns |", "| --- | --- | --- | --- |"]
    for (challenge, templates), paper in PAPER_TABLE9.items():
        title = CHALLENGE_TITLES[challenge] + (" OOT" if templates == "OOT" else "")
        cells = [_cell(results.table9.get((challenge, templates, m)), paper[i]) for i, m in enumerate(TABLE9_COLUMNS)]
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {results.turns.get((challenge, templates, True), 0)} |")
    lines += ["", *(f"- {note}" for note in results.notes)]
    return "\n".join(lines) + "\n"


def format_banking_csv(results: BankingResults) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["table", "test_case", "templates", "model", "per_response_accuracy", "paper"])
    for (challenge, templates, model), value in results.table8.items():
        writer.writerow([8, challenge, templates, model, value,
                         PAPER_TABLE8[challenge][TABLE8_COLUMNS.index((templates, model))]])
    for (challenge, templates, model), value in results.table9.items():
        paper = PAPER_TABLE9.get((challenge, templates))
        writer.writerow([9, challenge, templates, model, value, paper[TABLE9_COLUMNS.index(model)] if paper else None])
    return buffer.getvalue()


def write_banking_results(results: BankingResults, out: str | Path) -> None:
    """The Markdown at ``out``, the CSV beside it (``.csv``)."""
    out = Path(out)
    write_text_atomic(out, format_banking_markdown(results))
    write_text_atomic(out.with_suffix(".csv"), format_banking_csv(results))
