"""Task 6's estimates beside the held-back test, for docs/babi.md: every method's (folds), (new bot) and (dev)
figures read from `dialog benchmark`'s CSVs, the maintainers' held-back test figures beside them (quoted from
``models.babi.paper``; the project never reads the test file) and how far each estimate is from the test, then the
(new bot) row by answer kind beside the test's kinds; and, in a block of its own, each held-out style of the (new
bot) row set beside the test, method by method. Written between markers, so no figure there is typed.

    python -m models.babi.task6_report docs/babi.md docs/tables/babi-task6-public.csv [MORE.csv ...]
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from models.babi.paper import HCN_TASK6, HELD_BACK_TASK6, HELD_BACK_TASK6_KINDS
from models.babi.report import figure, title
from models.doc_blocks import write_block

START, END = "<!-- TASK 6 ESTIMATES -->", "<!-- /TASK 6 ESTIMATES -->"
STYLES_START, STYLES_END = "<!-- TASK 6 STYLES -->", "<!-- /TASK 6 STYLES -->"
ROWS = ("T6 (folds)", "T6 (new bot)", "T6 (dev)")


def read_estimates(tables: Sequence[str | Path]) -> dict[str, dict[str, dict[str, str]]]:
    """method -> row -> its CSV row, in the order the methods first appear; a method in several CSVs keeps the
    first one's rows (list the CSVs newest first). A CSV without task 6's rows is a ValueError naming it."""
    found: dict[str, dict[str, dict[str, str]]] = {}
    for table in tables:
        with open(table, newline="") as handle:
            rows = [row for row in csv.DictReader(handle) if row.get("row") in ROWS]
        if not rows:
            raise ValueError(f"{table}: no task 6 row ({', '.join(ROWS)})")
        seen: dict[str, dict[str, dict[str, str]]] = {}
        for row in rows:
            seen.setdefault(row["method"], {})[row["row"]] = row
        for method, by_row in seen.items():
            found.setdefault(method, by_row)
    return found


# HCN and the product as they are now: in the kinds table beside the versions the maintainers measured, which the
# test column names (models.babi.paper.HCN_THEN, ENSEMBLE_THEN).
CURRENT = ("hcn", "hcn-ensemble")


def _cell(row: dict[str, str] | None) -> str:
    if row is None or not row["per_response_accuracy"]:
        return ""
    spread = row.get("per_response_spread")
    return figure(float(row["per_response_accuracy"]), float(spread) if spread else None)


def format_estimates(tables: Sequence[str | Path]) -> str:
    """The block: the estimates table, then the (new bot) row by kind for the methods measured on the test."""
    estimates = read_estimates(tables)
    lines = ["| method | folds | new bot | dev | held-back test (maintainers) | new bot - test |",
             "| --- | --- | --- | --- | --- | --- |"]
    for method, rows in estimates.items():
        test = HELD_BACK_TASK6.get(method)
        new_bot = rows.get("T6 (new bot)")
        error = (f"{float(new_bot['per_response_accuracy']) - test:+.1f}"
                 if test is not None and new_bot is not None else "")
        lines.append(f"| {title(method)} (`{method}`) | {_cell(rows.get('T6 (folds)'))} | {_cell(new_bot)} | "
                     f"{_cell(rows.get('T6 (dev)'))} | {'' if test is None else f'{test:g}'} | {error} |")
    measured = [method for method in estimates
                if method in CURRENT or any(method in by for _, by in HELD_BACK_TASK6_KINDS.values())]
    kinds = ["| kind | test turns | " + " | ".join(f"{title(m)}: new bot (decision) / test" for m in measured) + " |",
             "| --- | --- |" + " --- |" * len(measured)]
    for kind, (turns, by_method) in HELD_BACK_TASK6_KINDS.items():
        cells = []
        for method in measured:
            new_bot = estimates[method].get("T6 (new bot)")
            ours, decided = (json.loads(new_bot[column]).get(kind) if new_bot and new_bot.get(column) else None
                             for column in ("by_kind", "decided_by_kind"))
            cells.append(f"{'' if ours is None else f'{ours:.1f}'}{'' if decided is None else f' ({decided:.1f})'} / "
                         f"{by_method.get(method, '')}")
        kinds.append(f"| {kind} | {turns:,} | " + " | ".join(cells) + " |")
    sources = ", ".join(f"[{Path(t).name}]({Path(t).as_posix().removeprefix('docs/')})" for t in tables)
    return "\n".join([*lines, "", f"Per-response %, (folds) and (new bot) mean ± standard deviation over their runs; "
                      f"HCN's published test figure is {HCN_TASK6:g}. By answer kind, the (new bot) row beside the "
                      "held-back test (in parentheses, where the CSV has it, the % of the kind's turns answered with "
                      "an answer of that kind, however worded):", "", *kinds, "",
                      f"From {sources} by `python -m models.babi.task6_report`; the held-back figures are the "
                      "maintainers' (`models/babi/paper.py`)."])


def held_out_figures(row: dict[str, str]) -> list[float]:
    """The per-run figures of a (folds) or (new bot) row, in run order: its note
    (``models.babi.reproduce.held_out_note``) ends with them ("mean over 3 ...: 57.83, 45.99, 52.58")."""
    note = row.get("note") or ""
    try:
        return [float(value) for value in note.rsplit(": ", 1)[1].split(", ")]
    except (IndexError, ValueError):
        raise ValueError(f"{row['method']} {row['row']}: no per-run figures at the end of its note {note!r}") from None


def format_styles(tables: Sequence[str | Path]) -> str:
    """Each held-out style of the (new bot) row against the held-back test, for the methods the maintainers
    measured: the style's figure less the test's, and the mean absolute error over those methods. Shown so that a
    single style's fit to the test can be read beside the average's; it is not a way to choose one."""
    estimates = read_estimates(tables)
    measured = [method for method in HELD_BACK_TASK6 if "T6 (new bot)" in estimates.get(method, {})]
    if not measured:
        raise ValueError("no (new bot) row of a method measured on the held-back test in "
                         + ", ".join(str(t) for t in tables))
    per_style = {method: held_out_figures(estimates[method]["T6 (new bot)"]) for method in measured}
    styles = {len(figures) for figures in per_style.values()}
    if len(styles) != 1:
        raise ValueError(f"the (new bot) rows hold different numbers of styles: {per_style}")
    rows = [(f"style {index + 1}", [per_style[m][index] for m in measured]) for index in range(styles.pop())]
    rows.append(("the styles averaged (the (new bot) row)",
                 [float(estimates[m]["T6 (new bot)"]["per_response_accuracy"]) for m in measured]))
    lines = ["| held out | " + " | ".join(f"`{m}`" for m in measured) + " | mean absolute error |",
             "| --- |" + " --- |" * (len(measured) + 1)]
    for name, figures in rows:
        errors = [figure - HELD_BACK_TASK6[method] for figure, method in zip(figures, measured, strict=True)]
        lines.append(f"| {name} | " + " | ".join(f"{error:+.2f}" for error in errors)
                     + f" | {sum(map(abs, errors)) / len(errors):.2f} |")
    return "\n".join([*lines, "", "Per-response %, each held-out style's figure (from the (new bot) rows' notes) less "
                      "the maintainers' held-back test figure (`models/babi/paper.py`), by `python -m "
                      "models.babi.task6_report`."])


def main(argv: Sequence[str]) -> None:
    if len(argv) < 2:
        raise SystemExit("usage: python -m models.babi.task6_report DOCUMENT TABLE.csv [TABLE.csv ...]")
    write_block(argv[0], START, END, format_estimates(argv[1:]))
    write_block(argv[0], STYLES_START, STYLES_END, format_styles(argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
