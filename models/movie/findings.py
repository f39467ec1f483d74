"""Dodge et al.'s findings on Table 6 checked on the paper-scale runs' CSVs (each cell its newest run, as the
assembled table shows it), so that docs/movie.md states whether each holds from the figures, never typing one.

The runs are single runs (no spread), so a comparison is of the two figures as they are; two figures are "alike"
within :data:`ALIKE` points. A finding is judged on the cells it names that were run; each cell says its epoch
budget where it is not the default 8.

    python -m models.movie.findings docs/movie.md docs/tables/movie-table6-paper/*.csv
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from models.doc_blocks import write_block
from models.movie.paper import PAPER_TABLE6, TASK_TITLES
from models.movie.report import newest_cells

# Two figures this close count as alike: the paper calls its Recs figures of the embeddings and MemN2N alike
# (PAPER_TABLE6).
ALIKE = 2.0
START, END = "<!-- MOVIE FINDINGS -->", "<!-- /MOVIE FINDINGS -->"
EMB, MEM, LSTM = "Supervised embeddings", "MemN2N", "LSTM"
JOINT = {MEM: "Joint MemN2N", EMB: "Joint supervised embeddings"}

Newest = dict[tuple[str, int], dict[str, str]]
Holds = Callable[[float, float], bool]


def value(cells: Newest, method: str, task: int) -> float | None:
    cell = cells.get((method, task))
    return None if cell is None else float(cell["hits"])


def below(mine: float, theirs: float) -> bool:
    return mine < theirs


def above(mine: float, theirs: float) -> bool:
    return mine > theirs


def alike(mine: float, theirs: float) -> bool:
    return abs(mine - theirs) <= ALIKE


def within_four(mine: float, theirs: float) -> bool:
    return abs(mine - theirs) <= 4.0


@dataclass(frozen=True)
class Finding:
    """A finding: the cells it compares, each ``(method, task, other method, holds)``, judged by
    ``holds(ours, other's)``."""

    claim: str
    pairs: tuple[tuple[str, int, str, Holds], ...]

    def judge(self, cells: Newest) -> tuple[str, str, str]:
        paper, ours, verdicts = [], [], []
        for method, task, other, holds in self.pairs:
            title = TASK_TITLES[task].removesuffix(" task")
            paper.append(f"{title}: {method} {PAPER_TABLE6[method][task - 1]} vs {other} "
                         f"{PAPER_TABLE6[other][task - 1]}")
            mine, theirs = value(cells, method, task), value(cells, other, task)
            if mine is None or theirs is None:
                ours.append(f"{title}: not run")
                continue
            ours.append(f"{title}: {method} {mine:.1f}{_budget(cells, method, task)} vs {other} "
                        f"{theirs:.1f}{_budget(cells, other, task)}")
            verdicts.append(holds(mine, theirs))
        held = sum(verdicts)
        verdict = ("not run" if not verdicts else "Yes" if held == len(verdicts) else
                   f"{'Partly' if held else 'No'} ({held} of {len(verdicts)} comparisons)")
        return "; ".join(paper), "; ".join(ours), verdict


def _budget(cells: Newest, method: str, task: int) -> str:
    """The cell's epoch budget where it is not the 8 every learned row has by default."""
    epochs = cells[(method, task)]["epochs"]
    return f" (at most {epochs} epochs)" if epochs and int(epochs) != 8 else ""


TASKS = tuple(TASK_TITLES)
FINDINGS = (
    Finding("IR below MemN2N on Reddit", (("IR", 4, MEM, below),)),
    Finding("KB memory helps QA: MemN2N above the embeddings", ((MEM, 1, EMB, above),)),
    Finding(f"The embeddings and MemN2N alike on Recs (within {ALIKE:g} points), SVD below both",
            ((EMB, 2, MEM, alike), ("SVD", 2, EMB, below), ("SVD", 2, MEM, below))),
    Finding("Joint training within 4 points of training per task, on every task",
            tuple((JOINT[m], task, m, within_four) for m in (MEM, EMB) for task in TASKS)),
    Finding("The LSTM below the embeddings and MemN2N on every task",
            tuple((LSTM, task, other, below) for task in TASKS for other in (EMB, MEM))),
)


def format_findings(paths: Sequence[str | Path]) -> str:
    """The findings table judged on the pieces' newest cells, naming the pieces' directory."""
    cells = newest_cells(paths)
    folder = Path(paths[0]).parent.name if paths else "movie-table6-paper"
    lines = ["| # | The paper says | The paper's figures | Ours (newest run of each cell) | Holds? |",
             "| --- | --- | --- | --- | --- |"]
    for number, finding in enumerate(FINDINGS, 1):
        paper, ours, verdict = finding.judge(cells)
        lines.append(f"| {number} | {finding.claim} | {paper} | {ours} | {verdict} |")
    return "\n".join([*lines, "", "Written by `python -m models.movie.findings` from the runs' CSVs in "
                      f"[tables/{folder}/](tables/{folder}/) (test hits@k; a cell trained with "
                      "another budget than the default 8 epochs says so)."])


def main(argv: Sequence[str] | None = None) -> None:
    """``make tables``: the findings of the paper-scale Table 6 written between their markers in a document."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m models.movie.findings", description=main.__doc__)
    parser.add_argument("document", help="the document whose findings block (between its markers) is rewritten")
    parser.add_argument("pieces", nargs="+", help="the runs' Table 6 CSVs")
    parser.add_argument("--block", default="MOVIE FINDINGS",
                        help="the name in the block's markers (<!-- NAME --> ... <!-- /NAME -->)")
    args = parser.parse_args(argv)
    write_block(args.document, f"<!-- {args.block} -->", f"<!-- /{args.block} -->", format_findings(args.pieces))


if __name__ == "__main__":
    main()
