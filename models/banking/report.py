"""Tables 8 and 9 as Markdown and CSV: our figures beside the paper's, the turns each row counts, and the notes on
how each network was chosen."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from data.atomic import write_text_atomic
from data.banking.labels import CHALLENGES, NONE
from models import provenance
from models.banking.paper import CHALLENGE_TITLES, PAPER_TABLE8, PAPER_TABLE9

# Table 8's columns, in the order of the paper's figures (PAPER_TABLE8), and ours beside them.
TABLE8_COLUMNS = (("IT", "SMN"), ("IT", "MMN"), ("OOT", "SMN"), ("OOT", "MMN"))
TABLE9_COLUMNS = ("SMN", "MMN")
OURS = "Ours"
SHOWN8 = (("IT", "SMN"), ("IT", "MMN"), ("IT", OURS), ("OOT", "SMN"), ("OOT", "MMN"), ("OOT", OURS))


@dataclass
class BankingResults:
    """Each cell's mean over the seeds (``spread``: the standard deviation, None from one seed)."""

    table8: dict[tuple[str, str, str], float | None]  # (challenge, "average" or "routing", IT|OOT, SMN|MMN)
    table9: dict[tuple[str, str, str], float | None]  # (challenge, IT|OOT, SMN|MMN)
    turns: dict[tuple[str, str, bool], int]  # (challenge, IT|OOT, multiple): per seed
    seconds: dict[str, float]  # over every seed
    notes: list[str]
    seeds: int = 1
    spread8: dict[tuple[str, str, str], float | None] = field(default_factory=dict)
    spread9: dict[tuple[str, str, str], float | None] = field(default_factory=dict)
    readings: dict[str, object] = field(default_factory=dict)  # the corpora's readings other than the defaults


def _paper8(challenge: str, column: tuple[str, str]) -> float | None:
    return PAPER_TABLE8[challenge][TABLE8_COLUMNS.index(column)] if column in TABLE8_COLUMNS else None


def _paper9(challenge: str, templates: str, model: str) -> float | None:
    paper = PAPER_TABLE9.get((challenge, templates))
    return paper[TABLE9_COLUMNS.index(model)] if paper and model in TABLE9_COLUMNS else None


def _models(results: BankingResults) -> list[str]:
    return list(dict.fromkeys(model for (_, _, model) in results.table8))


def _cell(value: float | None, paper: float | None, spread: float | None = None) -> str:
    ours = "n/a" if value is None else f"**{value:.2f}**" + (f" ± {spread:.2f}" if spread is not None else "")
    return ours + (f" · paper {paper:.2f}" if paper is not None else "")


def format_banking_markdown(results: BankingResults) -> str:
    over = f"mean ± standard deviation over {results.seeds} seeds (corpus and training)" if results.seeds > 1 else \
        "one seed"
    models = _models(results)
    shown = [column for column in SHOWN8 if column[1] in models]
    lines = [f"Table 8: per-response accuracy % on the banking self-play tests; ours ({over}), then the paper's.",
             "Non OOP: every bot turn of the non-OOP test dialogs. OOP rows: the bot turns answering the phenomenon. "
             "Our corpus comes from our own generator and templates, so the figures compare in shape, not value. "
             f"{OURS}: the state ranker, beyond the paper." + _readings_sentence(results.readings),
             "", "| Test case | " + " | ".join(f"{t} {m}" for t, m in shown) + " | turns (IT / OOT) |",
             "| --- |" + " --- |" * (len(shown) + 1)]
    for challenge in (NONE, *CHALLENGES, "average"):
        title = CHALLENGE_TITLES.get(challenge, "OOP Avg.")
        cells = [_cell(results.table8.get((challenge, t, m)), _paper8(challenge, (t, m)),
                       results.spread8.get((challenge, t, m))) for t, m in shown]
        counts = "" if challenge == "average" else \
            f"{results.turns.get((challenge, 'IT', False), 0)} / {results.turns.get((challenge, 'OOT', False), 0)}"
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {counts} |")
    routing = [_cell(results.table8.get(("routing", t, m)), None, results.spread8.get(("routing", t, m)))
               if m == "MMN" else "" for t, m in shown]
    lines.append("| MMN dialogs routed to their intent | " + " | ".join(routing) + " | |")
    lines += _development_rows(results, models)
    table9_models = [m for m in (*TABLE9_COLUMNS, OURS) if m in models]
    lines += ["", "Table 9: multiple out-of-pattern dialogs (the phenomenon twice), per-response accuracy % on the "
                  "bot turns answering it.", "", "| Test case | " + " | ".join(table9_models) + " | turns |",
              "| --- |" + " --- |" * (len(table9_models) + 1)]
    for challenge, templates in PAPER_TABLE9:
        title = CHALLENGE_TITLES[challenge] + (" OOT" if templates == "OOT" else "")
        cells = [_cell(results.table9.get((challenge, templates, m)), _paper9(challenge, templates, m),
                       results.spread9.get((challenge, templates, m))) for m in table9_models]
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {results.turns.get((challenge, templates, True), 0)} |")
    ablations = [m for m in models if m not in (*TABLE9_COLUMNS, OURS)]
    if ablations:
        columns = [(t, m) for m in (OURS, *ablations) for t in ("IT", "OOT")]
        lines += ["", f"The state ranker ({OURS}) and its ablations, each without one feature group.", "",
                  "| Test case | " + " | ".join(f"{t} {m}" for t, m in columns) + " |",
                  "| --- |" + " --- |" * len(columns)]
        for challenge in (NONE, *CHALLENGES, "average"):
            cells = [_cell(results.table8.get((challenge, t, m)), None, results.spread8.get((challenge, t, m)))
                     for t, m in columns]
            lines.append(f"| {CHALLENGE_TITLES.get(challenge, 'OOP Avg.')} | " + " | ".join(cells) + " |")
    lines += ["", *(f"- {note}" for note in results.notes)]
    return "\n".join(lines) + "\n"


def _readings_sentence(readings: dict[str, object]) -> str:
    if not readings:
        return ""
    named = ", ".join(f"`{name}={value}`" for name, value in readings.items())
    return f" The corpora read the paper otherwise in {named} (data/banking/readings.py), by default elsewhere."


def _development_rows(results: BankingResults, models: list[str]) -> list[str]:
    """The development challenge sets' table (``dev`` and ``dev-OOP``, development templates), when scored: the
    figures every choice about out-of-pattern dialogs is made on, so that no test file chooses anything."""
    if not any(templates == "dev" for (_, templates, _) in results.table8):
        return []
    lines = ["", "The development sets (dev: non-OOP; dev-OOP: each OOP case written with the development templates), "
                 "per-response accuracy %: what the choices are made on.", "",
             "| Dev case | " + " | ".join(models) + " | turns |", "| --- |" + " --- |" * (len(models) + 1)]
    for challenge in (NONE, *CHALLENGES, "average", "routing"):
        title = {"routing": "MMN dialogs routed to their intent"}.get(challenge, CHALLENGE_TITLES.get(challenge,
                                                                                                       "OOP Avg."))
        cells = [_cell(results.table8.get((challenge, "dev", m)), None, results.spread8.get((challenge, "dev", m)))
                 if challenge != "routing" or m == "MMN" else "" for m in models]
        turns = results.turns.get((challenge, "dev", False), "")
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {turns} |")
    for challenge, _ in [key for key in PAPER_TABLE9 if key[1] == "IT"]:
        cells = [_cell(results.table9.get((challenge, "dev", m)), None, results.spread9.get((challenge, "dev", m)))
                 for m in models]
        lines.append(f"| {CHALLENGE_TITLES[challenge]}, twice | " + " | ".join(cells) +
                     f" | {results.turns.get((challenge, 'dev', True), '')} |")
    return lines


def format_banking_csv(results: BankingResults) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["table", "test_case", "templates", "model", "per_response_accuracy", "sd", "seeds", "paper",
                     "readings"])
    readings = json.dumps(results.readings, sort_keys=True) if results.readings else ""
    for (challenge, templates, model), value in results.table8.items():
        paper = _paper8(challenge, (templates, model)) if challenge in PAPER_TABLE8 else None
        writer.writerow([8, challenge, templates, model, value, results.spread8.get((challenge, templates, model)),
                         results.seeds, paper, readings])
    for (challenge, templates, model), value in results.table9.items():
        writer.writerow([9, challenge, templates, model, value, results.spread9.get((challenge, templates, model)),
                         results.seeds, _paper9(challenge, templates, model), readings])
    return buffer.getvalue()


def write_banking_results(results: BankingResults, out: str | Path) -> None:
    """The Markdown at ``out``, the CSV beside it (``.csv``)."""
    out = Path(out)
    write_text_atomic(out, f"{format_banking_markdown(results).rstrip()}\n\n{provenance.stamp()}\n")
    write_text_atomic(out.with_suffix(".csv"), format_banking_csv(results))
