"""Tables 8 and 9 of Majumdar et al. for a corpus holding the banking self-play task: SMN against MMN.

Non-OOP rows count every bot turn of the non-OOP test dialogs; an OOP row counts the bot turns that answer the
phenomenon (the challenge turns of the labels sidecar), where the dialogs differ from anything seen in training.
``dialog benchmark`` calls :func:`benchmark` for every corpus; it writes these tables when the banking task is
among the tasks asked for.
"""

from __future__ import annotations

import csv
import io
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from data.atomic import write_text_atomic
from data.banking.domain import INTENTS
from data.banking.labels import CHALLENGES, NONE, read_labels
from data.layout import BANKING_TASK, TaskFiles, discover, task_labels_name
from models.banking.networks import LabelledExample, labelled_examples, paper_config, train_mmn, train_smn
from models.examples import TaskData
from models.methods import best_answers
from models.features import build_spec
from models.metrics import percent

DEFAULT_EPOCHS = 20  # the paper's; more is never run

CHALLENGE_TITLES = {NONE: "Non OOP", "turn_compression": "Turn Comp.", "new_api": "New API",
                    "reordering": "Reordering", "another_slot": "Another Slot", "audit_more": "Audit More"}
# Table 8 (IT SMN, IT MMN, OOT SMN, OOT MMN) and Table 9 (SMN, MMN) of the paper.
PAPER_TABLE8 = {NONE: (88.62, 90.17, 87.39, 88.27), "turn_compression": (27.80, 55.00, 27.90, 54.70),
                "new_api": (7.42, 7.83, 8.17, 6.67), "reordering": (54.50, 45.50, 54.00, 41.50),
                "another_slot": (38.00, 25.00, 41.50, 27.50), "audit_more": (15.50, 34.00, 16.00, 35.00),
                "average": (28.64, 33.47, 29.51, 33.07)}
PAPER_TABLE9 = {("turn_compression", "IT"): (29.61, 55.16), ("turn_compression", "OOT"): (29.07, 55.13),
                ("audit_more", "IT"): (10.50, 15.02), ("audit_more", "OOT"): (10.90, 15.43)}


def accuracy(examples: Sequence[LabelledExample], predictions: Sequence[str]) -> float | None:
    """Per-response accuracy of the chosen turns (None when there are none, so the cell says n/a)."""
    if not examples:
        return None
    return round(percent(p == e.example.answer for e, p in zip(examples, predictions, strict=True)), 2)


@dataclass
class BankingResults:
    table8: dict[tuple[str, str, str], float | None]  # (challenge or "average", IT|OOT, SMN|MMN)
    table9: dict[tuple[str, str, str], float | None]  # (challenge, IT|OOT, SMN|MMN)
    turns: dict[tuple[str, str, bool], int]
    seconds: dict[str, float]
    notes: list[str]


def score(answers: Mapping[str, Sequence[str]], tests: Sequence[LabelledExample]) -> tuple[dict, dict, dict]:
    """Tables 8 and 9 from each model's first answer to every test example (``answers``: model -> answers)."""
    table8: dict[tuple[str, str, str], float | None] = {}
    table9: dict[tuple[str, str, str], float | None] = {}
    turns: dict[tuple[str, str, bool], int] = {}
    for name, predicted in answers.items():
        predictions = dict(zip((id(e) for e in tests), predicted, strict=True))
        for templates in ("IT", "OOT"):
            for challenge in (NONE, *CHALLENGES):
                for multiple in (False, True):
                    chosen = [e for e in tests if e.templates == templates and e.challenge == challenge
                              and e.multiple == multiple and (challenge == NONE or e.is_challenge_turn)]
                    if multiple and not chosen:
                        continue
                    value = accuracy(chosen, [predictions[id(e)] for e in chosen])
                    (table9 if multiple else table8)[(challenge, templates, name)] = value
                    turns[(challenge, templates, multiple)] = len(chosen)
            values = [table8[(c, templates, name)] for c in CHALLENGES if table8.get((c, templates, name)) is not None]
            table8[("average", templates, name)] = round(sum(values) / len(values), 2) if values else None
    return table8, table9, turns


def run_banking_benchmark(files: TaskFiles, out: str | Path, epochs: int = 20, work: str | Path | None = None,
                          progress: Callable[[str], None] = print) -> BankingResults:
    """Train SMN and MMN on ``trn`` (best epoch on ``dev``), write Tables 8 and 9 (Markdown and CSV)."""
    labels = read_labels(Path(files.splits["trn"]).parent / task_labels_name(BANKING_TASK, files.name))
    task = TaskData.load(files)
    trn, dev = labelled_examples(task, "trn", labels), labelled_examples(task, "dev", labels)
    tests = [e for split in ("tst", "tst-OOT") if split in files.splits
             for e in labelled_examples(task, split, labels)]
    config = paper_config(epochs, patience=3)  # up to ``epochs``; stop after 3 epochs without a better dev
    spec = build_spec(task, memory_size=config.max_memory)
    seconds: dict[str, float] = {}
    notes = []
    with tempfile.TemporaryDirectory(prefix="banking-", dir=work) as directory:
        started = time.perf_counter()
        smn, smn_summary = train_smn(spec, trn, dev, config, Path(directory))
        seconds["SMN"] = time.perf_counter() - started
        notes.append(f"SMN: best epoch {smn_summary['best_epoch']}/{epochs} on dev "
                     f"({smn_summary['dev_per_response_accuracy']}%), {seconds['SMN']:.0f} s")
        progress(notes[-1])
        started = time.perf_counter()
        mmn, mmn_summaries = train_mmn(spec, trn, dev, config, Path(directory))
        seconds["MMN"] = time.perf_counter() - started
        routed = mmn.route(tests)
        intents = {e.example.dialog_id: e.intent for e in tests}
        routing = 100.0 * sum(routed[d] == intents[d] for d in routed) / max(len(routed), 1)
        best_epochs = ", ".join(str(mmn_summaries[i]["best_epoch"]) for i in INTENTS)
        selector_dev = mmn_summaries["selector"]["dev_per_response_accuracy"]
        selector_rate = mmn_summaries["selector"]["config"]["learning_rate"]
        notes.append(f"MMN: intent networks' best epochs {best_epochs}; selector (learning rate {selector_rate}, "
                     f"chosen on dev) dev {selector_dev}%, test dialogs routed to their intent {routing:.2f}%; "
                     f"{seconds['MMN']:.0f} s")
        progress(notes[-1])
        answers = {"SMN": best_answers(smn, tests), "MMN": [row[0] for row in mmn.rank(tests, 1, routes=routed)]}
        table8, table9, turns = score(answers, tests)
    results = BankingResults(table8, table9, turns, seconds, notes)
    write_banking_results(results, out)
    return results


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
        cells = [_cell(results.table8.get((challenge, t, m)), paper[i])
                 for i, (t, m) in enumerate((("IT", "SMN"), ("IT", "MMN"), ("OOT", "SMN"), ("OOT", "MMN")))]
        counts = "" if challenge == "average" else \
            f"{results.turns.get((challenge, 'IT', False), 0)} / {results.turns.get((challenge, 'OOT', False), 0)}"
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {counts} |")
    lines += ["", "Table 9: multiple out-of-pattern dialogs (the phenomenon twice), per-response accuracy % on the "
                  "bot turns answering it.", "", "| Test case | SMN | MMN | turns |", "| --- | --- | --- | --- |"]
    for (challenge, templates), paper in PAPER_TABLE9.items():
        title = CHALLENGE_TITLES[challenge] + (" OOT" if templates == "OOT" else "")
        cells = [_cell(results.table9.get((challenge, templates, m)), paper[i]) for i, m in enumerate(("SMN", "MMN"))]
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {results.turns.get((challenge, templates, True), 0)} |")
    lines += ["", *(f"- {note}" for note in results.notes)]
    return "\n".join(lines) + "\n"


def format_banking_csv(results: BankingResults) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["table", "test_case", "templates", "model", "per_response_accuracy", "paper"])
    for (challenge, templates, model), value in results.table8.items():
        index = {("IT", "SMN"): 0, ("IT", "MMN"): 1, ("OOT", "SMN"): 2, ("OOT", "MMN"): 3}[(templates, model)]
        writer.writerow([8, challenge, templates, model, value, PAPER_TABLE8[challenge][index]])
    for (challenge, templates, model), value in results.table9.items():
        paper = PAPER_TABLE9.get((challenge, templates))
        writer.writerow([9, challenge, templates, model, value, paper[("SMN", "MMN").index(model)] if paper else None])
    return buffer.getvalue()


def write_banking_results(results: BankingResults, out: str | Path) -> None:
    out = Path(out)
    write_text_atomic(out, format_banking_markdown(results))
    write_text_atomic(out.with_suffix(".csv"), format_banking_csv(results))


def output_path(out: Path, tasks: Sequence[int]) -> Path:
    """Where the tables go: ``out`` itself, or ``OUT-banking.md`` when Table 2 is written to ``out`` too."""
    return out.with_name(f"{out.stem}-banking{out.suffix}") if any(t != BANKING_TASK for t in tasks) else out


def benchmark(data: str | Path, out: str | Path, tasks: Sequence[int] = (), epochs: int | None = None,
              progress: Callable[[str], None] = print) -> list[Path]:
    """Tables 8-9 when the corpus has the banking task and ``tasks`` (empty: every task) asks for it; the files
    written. ``epochs`` is capped at the paper's 20."""
    present = discover(data)
    wanted = [t for t in present if not tasks or t in tasks]
    if BANKING_TASK not in wanted:
        return []
    path = output_path(Path(out), wanted)
    run_banking_benchmark(present[BANKING_TASK], path, epochs=min(epochs or DEFAULT_EPOCHS, DEFAULT_EPOCHS),
                          progress=progress)
    return [path, path.with_suffix(".csv")]
