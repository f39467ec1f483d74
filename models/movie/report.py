"""Table 6 as Markdown: each method's test hits@k per task, ours then the paper's, and the notes (what each
method chose on dev, tasks 3-4 by exchange, each joint model against its per-task models)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from data.atomic import write_text_atomic
from models import provenance
from models.doc_blocks import write_block
from models.metrics import hits_at_k
from models.movie.examples import MovieExample
from models.movie.paper import PAPER_K, PAPER_TABLE6, TASK_TITLES

CSV_FIELDS = ("method", "task", "hits", "k", "paper", "seconds", "epochs", "streamed", "run_at", "commit", "note")


@dataclass
class Row:
    """A method's row: its title (a row of the paper's table), test hits@k by task, seconds, notes (and the note of
    each task's fit, for the CSV)."""

    method: str
    values: dict[int, float]
    seconds: float
    notes: list[str]
    cell_notes: dict[int, str] = field(default_factory=dict)


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


def epochs_of(note: str) -> str:
    """The epochs a learned model's fit ran at most ("best epoch 4/30": 30), from its note; "" for a baseline."""
    found = re.search(r"best epoch \d+/(\d+)", note)
    return found.group(1) if found else ""


def format_table6_csv(rows: list[Row], streamed: bool, run_at: str, commit: str) -> str:
    """One line per cell that was run (method, task), with where it came from: the CSV a paper-scale table is
    assembled from (:func:`assemble_table6`)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        for task, value in row.values.items():
            note = row.cell_notes.get(task, "")
            paper = PAPER_TABLE6[row.method][task - 1]
            writer.writerow({"method": row.method, "task": task, "hits": value, "k": PAPER_K[task],
                             "paper": "" if paper is None else paper, "seconds": round(row.seconds, 1),
                             "epochs": epochs_of(note), "streamed": streamed, "run_at": run_at, "commit": commit,
                             "note": note})
    return buffer.getvalue()


def write_table6(out: str | Path, rows: list[Row], tasks: Sequence[int] = (), streamed: bool = False) -> None:
    """The table at ``out`` and its CSV beside it (``.csv``), each written atomically (a reader never sees half of
    it)."""
    out = Path(out)
    run_at, commit = provenance.now(), provenance.commit()
    write_text_atomic(out, f"{format_table6(rows, tasks).rstrip()}\n\n{provenance.stamp(when=run_at, at=commit)}\n")
    write_text_atomic(out.with_suffix(".csv"), format_table6_csv(rows, streamed, run_at, commit))


def read_cells(paths: Sequence[str | Path]) -> list[dict[str, str]]:
    """The cells of Table 6's CSVs, each with the file it came from; a file with other columns is a ValueError
    naming it."""
    cells = []
    for path in paths:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != CSV_FIELDS:
                raise ValueError(f"{path}: not a Table 6 CSV (columns {reader.fieldnames}, expected {CSV_FIELDS})")
            cells += [{**cell, "file": Path(path).name} for cell in reader]
    return cells


def newest_cells(paths: Sequence[str | Path]) -> dict[tuple[str, int], dict[str, str]]:
    """Each (row, task)'s newest run among the CSVs: the cell the assembled table shows."""
    newest: dict[tuple[str, int], dict[str, str]] = {}
    for cell in read_cells(paths):
        key = (cell["method"], int(cell["task"]))
        if key not in newest or cell["run_at"] > newest[key]["run_at"]:
            newest[key] = cell
    return newest


def assemble_table6(paths: Sequence[str | Path], title: str) -> str:
    """One Table 6 from the cells of several runs' CSVs: each cell the newest run of it (by ``run_at``), numbered;
    under the table, every run of each cell (newest first) with its date, commit, epochs and note, so no run is
    hidden by a later one. A cell no run has is "not run" (n/a where the paper has no figure either)."""
    runs: dict[tuple[str, int], list[dict[str, str]]] = {}
    for cell in read_cells(paths):
        runs.setdefault((cell["method"], int(cell["task"])), []).append(cell)
    for found in runs.values():
        found.sort(key=lambda cell: cell["run_at"], reverse=True)
    unknown = sorted({method for method, _ in runs} - set(PAPER_TABLE6))
    if unknown:
        raise ValueError(f"rows not in Table 6: {unknown}")
    lines = [title, "", "| Method | " + " | ".join(TASK_TITLES.values()) + " |",
             "| --- |" + " --- |" * len(TASK_TITLES)]
    notes = []
    for method, paper_row in PAPER_TABLE6.items():
        cells = []
        for task in TASK_TITLES:
            paper = paper_row[task - 1]
            found = runs.get((method, task))
            if found:
                notes.append((method, task, found))
                ours = f"**{float(found[0]['hits']):.1f}** ({len(notes)})"
            else:
                ours = "n/a" if paper is None else "not run"
            cells.append(ours + (f" · paper {paper}" if paper is not None else ""))
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    lines += ["", "Runs of each cell, newest first (the first is the one shown):", ""]
    for number, (method, task, found) in enumerate(notes, 1):
        lines.append(f"{number}. {method}, {TASK_TITLES[task]}:")
        for cell in found:
            epochs = f", at most {cell['epochs']} epochs" if cell["epochs"] else ""
            trainer = ", streamed trainer" if cell["streamed"] == "True" else ""
            lines.append(f"   - {float(cell['hits']):.1f} on {cell['run_at']} at {cell['commit']}{epochs}{trainer} "
                         f"({cell['file']}): {cell['note'] or 'no note'}")
    return "\n".join(lines) + "\n"


# Table 6's joint rows from a pipeline run: the model each Trainer fits (models.movie.profiles) and the TFMA metric
# of each k of the paper.
PIPELINE_ROWS = {"memn2n": ("Joint MemN2N", "MemN2NTrainer"),
                 "embeddings": ("Joint supervised embeddings", "EmbeddingsTrainer")}
METRIC_OF_K = {1: "per_response_accuracy", 10: "hits_at_10", 100: "hits_at_100"}


def pipeline_cells(printed: dict, record: str, epochs: int, run_at: str, commit: str) -> str:
    """Table 6's joint rows (a CSV of the pieces) from the JSON line `dialog pipeline` prints on a Movie Dialog
    corpus: each pushed model's test hits@k per task with the paper's k (TFMA's ``split=test,task=...`` slices),
    its Trainer's seconds, its shape (the full profile's, as this code has it) in the note; ``record``: where the
    run's printed output is kept."""
    from models.movie.profiles import PROFILES
    from models.movie.records import TASK_NAMES

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for model, result in printed.get("models", {}).items():
        method, trainer = PIPELINE_ROWS[model]
        config = getattr(PROFILES["full"], model)
        shape = f"{config.hops} hop(s), {config.dictionaries} dictionaries"
        for task, name in TASK_NAMES.items():
            k = PAPER_K[task]
            slice_name = f"split=test,task={name}"
            writer.writerow({"method": method, "task": task, "hits": result["slices"][slice_name][METRIC_OF_K[k]],
                             "k": k, "paper": PAPER_TABLE6[method][task - 1],
                             "seconds": printed.get("component_seconds", {}).get(trainer, ""), "epochs": epochs,
                             "streamed": True, "run_at": run_at, "commit": commit,
                             "note": f"the pipeline's joint {model} (dialog pipeline, full profile, one model on "
                                     f"every task, {shape}), scored by TFMA on its test slice {slice_name}; the run: "
                                     f"{record}; seconds: its Trainer's"})
    return buffer.getvalue()


PAPER_TITLE = ("Table 6 at the paper's scale (`dialog generate movies --scale paper --seed 0`): test hits@k (k: 1 QA, "
               "100 Recs, 10 QA+Recs and Reddit); ours, then the paper's. Assembled by `make tables` (`python -m "
               "models.movie.report`) from the runs' CSVs in docs/tables/movie-table6-paper/, written a few cells "
               "at a time by `dialog benchmark --tasks ... --methods ...`.")
SUMMARY_START, SUMMARY_END = "<!-- TABLE 6 PAPER SCALE -->", "<!-- /TABLE 6 PAPER SCALE -->"


def format_summary(paths: Sequence[str | Path], table: str) -> str:
    """A page's view of the paper-scale Table 6 (docs/movie.md): the rows with every cell the paper has run (n/a
    where it has none), each cell its newest run and the paper's figure in parentheses; ``table`` is the assembled
    table's path, linked for the rest."""
    newest = newest_cells(paths)
    lines = ["| Method | " + " | ".join(TASK_TITLES.values()) + " |", "| --- |" + " --- |" * len(TASK_TITLES)]
    for method, paper in PAPER_TABLE6.items():
        if all((method, task) in newest for task in TASK_TITLES if paper[task - 1] is not None):
            cells = [f"{float(newest[method, task]['hits']):.1f} ({paper[task - 1]})" if paper[task - 1] is not None
                     else "n/a" for task in TASK_TITLES]
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
    source = f"[{Path(table).name}]({Path(table).as_posix()})"
    return "\n".join([*lines, "", "Test hits@k (k: 1 QA, 100 Recs, 10 QA+Recs and Reddit) at the paper's scale "
                       "(`dialog generate movies --scale paper`: 6M training exchanges), the paper's figure in "
                       f"parentheses: the rows with every cell the paper has run, each cell its newest run, from "
                       f"{source}, which has every row and each cell's runs."])


# The worlds whose paper-scale runs are assembled: the generator before its calibration (2026-11-26 to -27) and the
# calibrated one (issue 62); each has its directory of pieces, its table and its block in docs/movie.md.
WORLDS = {
    "uncalibrated": (PAPER_TITLE, SUMMARY_START, SUMMARY_END),
    "calibrated": (PAPER_TITLE.replace("--seed 0`)", "--seed 0`, the calibrated world)").replace(
        "movie-table6-paper/", "movie-table6-calibrated/"),
        "<!-- TABLE 6 CALIBRATED -->", "<!-- /TABLE 6 CALIBRATED -->"),
}


def main(argv: Sequence[str] | None = None) -> None:
    """``make tables``: the assembled table from the pieces, and (``--readme``) its summary in a page; with
    ``--joint-from RUN.json``, the joint rows of a pipeline run written as a piece (``out``, a CSV) instead."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m models.movie.report", description=main.__doc__)
    parser.add_argument("out", help="the assembled table (Markdown), or the piece (CSV) with --joint-from")
    parser.add_argument("pieces", nargs="*", help="the runs' Table 6 CSVs")
    parser.add_argument("--readme", action="append", default=[],
                        help="a document whose Table 6 block (between its markers) is rewritten (repeatable)")
    parser.add_argument("--world", choices=sorted(WORLDS), default="uncalibrated",
                        help="which world's runs the pieces are (its title and block markers)")
    parser.add_argument("--joint-from", metavar="RUN_JSON",
                        help="the JSON line a paper-scale `dialog pipeline` run printed last")
    parser.add_argument("--record", default="", help="with --joint-from: where the run's output is kept")
    parser.add_argument("--epochs", type=int, default=8, help="with --joint-from: the Trainers' epoch budget")
    args = parser.parse_args(argv)
    if args.joint_from:
        printed = json.loads(Path(args.joint_from).read_text().strip().splitlines()[-1])
        write_text_atomic(args.out, pipeline_cells(printed, args.record, args.epochs, provenance.now(),
                                                   provenance.commit()))
        return
    if not args.pieces:
        parser.error("the pieces (CSVs) to assemble are needed")
    title, start, end = WORLDS[args.world]
    text = assemble_table6(args.pieces, title)
    write_text_atomic(args.out, f"{text.rstrip()}\n\n{provenance.stamp('python -m models.movie.report')}\n")
    for document in args.readme:
        write_block(document, start, end,
                    format_summary(args.pieces, Path(args.out).relative_to(Path(document).parent)
                                   if Path(args.out).is_relative_to(Path(document).parent) else args.out))


if __name__ == "__main__":
    main()
