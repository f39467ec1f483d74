"""Table 2 as Markdown and CSV: our figures beside the paper's, the notes on how each method was chosen, and
accuracy by answer kind for the tasks chosen on folds."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from data.atomic import write_text_atomic
from data.babi import dstc2
from models import methods, provenance
from models.babi.answer_kinds import KINDS
from models.babi.folds import NEW_BOT_STYLES
from models.babi.methods import MAX_EPOCHS, PATIENCE
from models.babi.paper import PAPER_TABLE2
from models.babi.presets import OOV_DEV_STEP
from models.doc_blocks import write_block
from models.training import OOV_DEV_SPLIT, TRAINING_DEFAULTS

# Tasks whose methods choose on folds of trn rather than on dev (task 6, where dev overstates the held-back test:
# real callers; models.babi.folds). Their rows also get accuracy by answer kind.
FOLD_TASKS = (dstc2.TASK,)


@dataclass
class Cell:
    row: str
    method: str
    per_response: float | None
    per_dialog: float | None
    seconds: float
    note: str = ""
    spread: float | None = None  # standard deviation of per-response accuracy over the folds (a (folds) row) or seeds
    kinds: dict[str, tuple[float, float, int]] = field(default_factory=dict)  # kind -> (accuracy, spread, turns)
    # kind -> (% of its turns answered with an answer of that kind, spread, turns): the decision apart from the wording
    decided: dict[str, tuple[float, float, int]] = field(default_factory=dict)


def row_name(task: int, split: str) -> str:
    return {"tst-OOV": f"T{task} (OOV)", "dev": f"T{task} (dev)", "folds": f"T{task} (folds)",
            "new_bot": f"T{task} (new bot)", OOV_DEV_SPLIT: f"T{task} (OOV dev)"}.get(split, f"T{task}")


def paper_row(row: str) -> str:
    """The paper's row a row of ours stands beside: a dev row the test's, the OOV dev row the OOV test's."""
    task = f"T{_task_of(row)}"
    return f"{task} (OOV)" if row.endswith("OOV)") or row.endswith("(OOV dev)") else task


def title(method: str) -> str:
    return methods.get(method, "babi").title


def _task_of(row: str) -> int:
    return int(row[1:].split()[0])


def _order(row: str) -> tuple[int, int]:
    group = (int(row.endswith("(OOV)")) + 2 * int(row.endswith("(folds)")) + 3 * int(row.endswith(" (dev)"))
             + 4 * int(row.endswith("(OOV dev)")) + 5 * int(row.endswith("(new bot)")))
    return (group, _task_of(row))


def figure(value: float, spread: float | None) -> str:
    """A table's figure: one decimal, and its spread over runs when there is one ("57.9 ±1.6")."""
    return f"{value:.1f}" + (f" ±{spread:.1f}" if spread is not None else "")


def format_markdown(cells: Sequence[Cell]) -> str:
    rows = sorted({cell.row for cell in cells}, key=_order)
    columns = [m for m in methods.names("babi") if any(cell.method == m for cell in cells)]
    by_key = {(cell.row, cell.method): cell for cell in cells}
    lines = ["Table 2: test per-response accuracy % (per-dialog in parentheses); ours, then the paper's.",
             "Train on trn, select on dev, report tst / tst-OOV. MemN2N: Table 9's hops and embedding size, trained "
             f"with Adam at learning rate {TRAINING_DEFAULTS['learning_rate']} in batches of "
             f"{TRAINING_DEFAULTS['batch_size']} (Table 9's 0.01 diverges under Adam), or at "
             f"{OOV_DEV_STEP['learning_rate']} in batches of {OOV_DEV_STEP['batch_size']}: the plain test sets take "
             "the step and epoch best on dev, the OOV test sets those best on an OOV dev set made from dev (its KB "
             "entities swapped for unseen ones). Supervised embeddings: Table 8's settings (margin ranking loss, "
             f"sampled negatives, history), Adam. The networks train until {PATIENCE['memn2n']} epochs in a row "
             f"({PATIENCE['embeddings']} for the embeddings) beat no best kept, at most {MAX_EPOCHS} (or --epochs).",
             "",
             "| Task | " + " | ".join(title(m) for m in columns) + " |",
             "| --- |" + " --- |" * len(columns)]
    for row in rows:
        values = []
        for method in columns:
            cell = by_key.get((row, method))
            # a dev or folds row: beside the paper's test figure
            paper = PAPER_TABLE2.get(paper_row(row), {}).get(method)
            ours = "not run" if cell is None else ("n/a" if cell.per_response is None else
                                                   f"**{figure(cell.per_response, cell.spread)}** "
                                                   f"({cell.per_dialog:.1f})")
            values.append(ours + (f" · paper {paper[0]:g} ({paper[1]:g})" if paper else ""))
        lines.append(f"| {row} | " + " | ".join(values) + " |")
    # one note for a method's rows of a task (its plain and OOV rows are one fit)
    notes = sorted({f"- {cell.row.removesuffix(' (OOV)').replace(' (OOV dev)', ' (dev)')} {title(cell.method)}: "
                    f"{cell.note}" for cell in cells if cell.note})
    fold_tasks = {_task_of(row) for row in rows if row.endswith("(folds)")}
    if any(row.endswith("(dev)") and _task_of(row) not in fold_tasks for row in rows):
        notes.append("- Rows marked (dev): the corpus has no test file, so dev (also the selection split) is reported, "
                     "beside the paper's test figure; rows marked (OOV dev): the OOV dev set made from dev "
                     "(data.oov_dev; the MemN2N rows also choose on it), beside the paper's OOV test figure.")
    if fold_tasks:
        notes.append("- Rows marked (folds): each method run once per fold of trn's dialogs, choosing its variant or "
                     "epoch on the next fold and training on the others; the mean over the held-out folds ± the "
                     "standard deviation. The dev and test rows of these tasks are one final model chosen on a fold "
                     "of trn: dev is reported, never used to choose.")
    if any(row.endswith("(new bot)") for row in rows):
        notes.append("- Rows marked (new bot): trn's dialogs split by the bot's wording style "
                     f"({NEW_BOT_STYLES} styles learned from its templates, models.babi.folds.bot_styles); each "
                     "style held out in turn, the method trained on the others (and the undecided dialogs), chosen "
                     "on a fifth of them, scored on the style held out; the mean over the styles ± their standard "
                     "deviation: an estimate for a bot that trained none of the dialogs.")
    return "\n".join(lines + ([""] + notes if notes else []) + format_kinds(cells)) + "\n"


def format_kinds(cells: Sequence[Cell]) -> list[str]:
    """Markdown lines: per-response accuracy by answer kind of the :data:`FOLD_TASKS` rows (none without)."""
    chosen = [cell for cell in cells if cell.kinds and _task_of(cell.row) in FOLD_TASKS]
    if not chosen:
        return []
    kinds = [kind for kind in KINDS if any(kind in cell.kinds for cell in chosen)]
    lines = ["", "Accuracy by answer kind (per-response %, models.babi.answer_kinds; (folds): mean ±standard "
             "deviation over the held-out folds). The turns line counts each kind's gold answers; a method's "
             "\"decision\" line, the % of each kind's turns it answered with an answer of that kind, however worded.",
             "",
             "| Row | Method | " + " | ".join(kinds) + " |", "| --- | --- |" + " --- |" * len(kinds)]
    for row in sorted({cell.row for cell in chosen}, key=_order):
        in_row = [cell for cell in chosen if cell.row == row]
        lines.append(f"| {row} | turns | " + " | ".join(str(max(c.kinds.get(k, (0, 0, 0))[2] for c in in_row))
                                                     for k in kinds) + " |")
        for cell in sorted(in_row, key=lambda c: methods.names("babi").index(c.method)):
            for name, by_kind in ((title(cell.method), cell.kinds), (f"{title(cell.method)}: decision", cell.decided)):
                if by_kind:
                    values = [figure(by_kind[k][0], by_kind[k][1] if cell.spread is not None else None)
                              if k in by_kind else "" for k in kinds]
                    lines.append(f"| {row} | {name} | " + " | ".join(values) + " |")
    return lines


def format_csv(cells: Sequence[Cell]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["row", "method", "per_response_accuracy", "per_dialog_accuracy", "paper_per_response",
                     "paper_per_dialog", "seconds", "note", "per_response_spread", "by_kind", "decided_by_kind"])
    for cell in cells:
        paper = PAPER_TABLE2.get(paper_row(cell.row), {}).get(cell.method, (None, None))
        by_kind, decided = (json.dumps({kind: value[0] for kind, value in kinds.items()}) if kinds else ""
                            for kinds in (cell.kinds, cell.decided))
        writer.writerow([cell.row, cell.method, cell.per_response, cell.per_dialog, paper[0], paper[1],
                         round(cell.seconds, 1), cell.note, cell.spread, by_kind, decided])
    return buffer.getvalue()


def write_results(cells: Sequence[Cell], out: str | Path) -> None:
    """Table 2's Markdown, ending with where it came from (``models.provenance.stamp``), and its CSV beside it."""
    out = Path(out)
    write_text_atomic(out, f"{format_markdown(cells).rstrip()}\n\n{provenance.stamp()}\n")
    write_text_atomic(out.with_suffix(".csv"), format_csv(cells))


HEADLINE_START, HEADLINE_END = "<!-- HEADLINE TABLE -->", "<!-- /HEADLINE TABLE -->"
HEADLINE_METHODS = ("memn2n_match", "template_memn2n")


def format_headline(table_csv: str | Path) -> str:
    """The README's headline: Table 2's test rows of tasks 1-5 for the paper's best network and ours, read from the
    CSV ``dialog benchmark`` wrote (so the README holds no figure typed by hand)."""
    with open(table_csv, newline="") as handle:
        rows = {(row["row"], row["method"]): row for row in csv.DictReader(handle)}
    wanted = [m for m in HEADLINE_METHODS if any(method == m for _, method in rows)]
    names = sorted({row for row, _ in rows if not row.endswith(("(dev)", "(folds)"))}, key=_order)
    lines = [HEADLINE_START, "", "| Test set | " + " | ".join(title(m) for m in wanted) + " |",
             "| --- |" + " --- |" * len(wanted)]
    for name in names:
        cells = []
        for method in wanted:
            row = rows.get((name, method))
            paper = f" ({float(row['paper_per_response']):g})" if row and row["paper_per_response"] else ""
            cells.append("not run" if row is None else f"{float(row['per_response_accuracy']):.1f}{paper}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    source = f"from [{Path(table_csv).name}]({Path(table_csv).as_posix()})."
    return "\n".join([*lines, "", "Per-response accuracy % on the test sets of our simulator's seed-0 corpus (the "
                      "paper's figure in parentheses),", source, HEADLINE_END])


def write_headline(table_csv: str | Path, readme: str | Path) -> None:
    """Replace the headline between its markers in ``readme`` (atomically)."""
    text = format_headline(table_csv)
    write_block(readme, HEADLINE_START, HEADLINE_END, text.removeprefix(HEADLINE_START).removesuffix(HEADLINE_END))


BELOW_START, BELOW_END = "<!-- TABLE 2 BELOW THE PAPER -->", "<!-- /TABLE 2 BELOW THE PAPER -->"


def format_below_paper(table_csv: str | Path, margin: float = 0.5) -> str:
    """The cells of a Table 2 CSV below the paper's figure less ``margin`` (ours, the paper's), and how many cells
    with a paper figure there are: docs/babi.md's account of Table 2 on the public dev, never typed."""
    with open(table_csv, newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["paper_per_response"] and row["per_response_accuracy"]]
    below = [row for row in rows if float(row["per_response_accuracy"]) + margin < float(row["paper_per_response"])]
    lines = ["| cell | ours | paper (test) |", "| --- | --- | --- |"]
    lines += [f"| {title(row['method'])} {row['row']} | {float(row['per_response_accuracy']):.1f} | "
              f"{float(row['paper_per_response']):g} |" for row in below]
    source = f"[{Path(table_csv).name}]({Path(table_csv).as_posix().removeprefix('docs/')})"
    return "\n".join([f"{len(rows) - len(below)} of the {len(rows)} cells with a paper figure are at or above it less "
                      f"{margin:g}; the others:", "", *lines, "",
                      f"From {source} by `python -m models.babi.report --below`."])


if __name__ == "__main__":  # make tables: python -m models.babi.report TABLE.csv README.md
    import sys

    if sys.argv[1] == "--below":  # python -m models.babi.report --below TABLE.csv DOCUMENT
        write_block(sys.argv[3], BELOW_START, BELOW_END, format_below_paper(sys.argv[2]))
    else:
        write_headline(sys.argv[1], sys.argv[2])
