"""Table 6 as Markdown: each method's test hits@k per task, ours then the paper's, and the notes (what each
method chose on dev, tasks 3-4 by exchange, each joint model against its per-task models)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from data.atomic import write_text_atomic
from models.metrics import hits_at_k
from models.movie.examples import MovieExample
from models.movie.paper import PAPER_TABLE6, TASK_TITLES


@dataclass
class Row:
    """A method's row: its title (a row of the paper's table), test hits@k by task, seconds, notes."""

    method: str
    values: dict[int, float]
    seconds: float
    notes: list[str]


# Each joint model's row, by the row of the same model trained per task.
JOINT_OF = {"Joint supervised embeddings": "Supervised embeddings", "Joint MemN2N": "MemN2N"}


def by_exchange(examples: list[MovieExample], ranked: list[list[str]], k: int) -> str:
    """hits@k by the examples' exchange in their dialog: task 3's breakdown (appendix C.2) on the 1st
    (recommendation), 2nd (QA) and 3rd (similar movies) exchange, and task 4's by turn."""
    parts = []
    for position in sorted({e.exchange for e in examples}):
        chosen = [i for i, e in enumerate(examples) if e.exchange == position]
        parts.append(f"exchange {position} {hits_at_k([examples[i] for i in chosen], [ranked[i] for i in chosen], k)}")
    return ", ".join(parts)


def joint_against_single(rows: list[Row]) -> list[str]:
    """What each joint model gains or loses against its per-task models, in hits@k points per task."""
    by_method = {row.method: row.values for row in rows}
    notes = []
    for joint, single in JOINT_OF.items():
        shared = [t for t in TASK_TITLES if t in by_method.get(joint, {}) and t in by_method.get(single, {})]
        if shared:
            deltas = ", ".join(f"task {t} {by_method[joint][t] - by_method[single][t]:+.1f}" for t in shared)
            notes.append(f"{joint} against {single} trained per task: {deltas}")
    return notes


def format_table6(rows: list[Row], tasks: Sequence[int] = ()) -> str:
    """The table; with ``tasks`` (the columns that were run), every other column's cells say "not run" rather than
    n/a (which says the method has nothing to offer there)."""
    header = ("Table 6: test hits@k (k: 1 QA, 100 Recs, 10 QA+Recs and Reddit); ours, then the paper's. On a world "
              "made by `dialog generate movies`, ours proves the machinery, not the paper's numbers.")
    lines = [header, "", "| Method | " + " | ".join(TASK_TITLES.values()) + " | seconds |",
             "| --- |" + " --- |" * (len(TASK_TITLES) + 1)]
    for row in rows:
        cells = []
        for task in TASK_TITLES:
            paper = PAPER_TABLE6[row.method][task - 1]
            if task in row.values:
                ours = f"**{row.values[task]:.1f}**"
            else:
                ours = "not run" if tasks and task not in tasks else "n/a"
            cells.append(ours + (f" · paper {paper}" if paper is not None else ""))
        lines.append(f"| {row.method} | " + " | ".join(cells) + f" | {row.seconds:.1f} |")
    notes = [note for row in rows for note in row.notes] + joint_against_single(rows)
    missing = [m for m in PAPER_TABLE6 if m not in {row.method for row in rows}]
    if missing:
        notes.append(f"Not run: {', '.join(missing)}.")
    return "\n".join(lines + [""] + [f"- {n}" for n in notes]) + "\n"


def write_table6(out: str | Path, rows: list[Row], tasks: Sequence[int] = ()) -> None:
    """The table at ``out``, written atomically (a reader never sees half of it)."""
    write_text_atomic(out, format_table6(rows, tasks))
