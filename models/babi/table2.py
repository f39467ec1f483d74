"""Table 2 of Bordes et al. (2017) for a corpus directory: every method, every task present, beside the paper.

Each method of the registry :data:`METHODS` fits on a task loaded once (:class:`~models.examples.TaskData`: every
split read a single time and handed to every method), picks its variant (or its best epoch) on ``dev``, and
returns a :class:`~models.examples.Ranker` that is reported on ``tst`` and ``tst-OOV``. Results are rewritten
(atomically) after every method, so an interrupted run keeps what it finished. The banking task (7) has Tables 8-9
of its own paper (``models.banking.tables``) and is left out here.
"""

from __future__ import annotations

import csv
import io
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from data.atomic import write_text_atomic
from data.layout import BANKING_TASK, discover
from models.babi.rule_based import RuleBasedSystem
from models.babi.rule_based_dstc2 import DSTC2RuleBased
from models.babi.template_ranker import LEARNED_FILL_DEPTH, POLICY_FEATURES, RankedFilling, TemplateRanker
from models.examples import Ranker, TaskData, TurnExample, best_answers
from models.features import kb_entity_types
from models.ir_baselines import NearestNeighbour, TfIdfMatch
from models.metrics import accuracy_report
from models.presets import TRAINING_DEFAULTS
from models.serving.ranker import SavedModelRanker
from models.training import TrainConfig, train

DSTC2_ASK_ORDERS = (("cuisine", "location", "price"), ("location", "cuisine", "price"),
                    ("location", "price", "cuisine"))
METHOD_TITLES = {
    "rule_based": "Rule-based", "tfidf": "TF-IDF (no type)", "tfidf_type": "TF-IDF (+ type)",
    "nearest_neighbour": "Nearest neighbour", "embeddings": "Supervised embeddings",
    "memn2n": "MemN2N (no match type)", "memn2n_match": "MemN2N (+ match type)",
    "template_memn2n": "Template MemN2N + learned filling (ours)",
    **{f"template_memn2n-no_{name}": f"Template MemN2N without {name}" for name in POLICY_FEATURES},
    "template_memn2n-no_policy_features": "Template MemN2N without the three policy features",
    "template_memn2n-memn2n_filling": "Template MemN2N, filled by a MemN2N (no hand-chosen feature)",
}
# Table 2 of the paper: row -> method -> (per-response, per-dialog).
PAPER_TABLE2: dict[str, dict[str, tuple[float, float]]] = {
    "T1": {"rule_based": (100, 100), "tfidf": (5.6, 0), "tfidf_type": (22.4, 0), "nearest_neighbour": (55.1, 0),
           "embeddings": (100, 100), "memn2n": (99.9, 99.6), "memn2n_match": (100, 100)},
    "T2": {"rule_based": (100, 100), "tfidf": (3.4, 0), "tfidf_type": (16.4, 0), "nearest_neighbour": (68.3, 0),
           "embeddings": (68.4, 0), "memn2n": (100, 100), "memn2n_match": (98.3, 83.9)},
    "T3": {"rule_based": (100, 100), "tfidf": (8.0, 0), "tfidf_type": (8.0, 0), "nearest_neighbour": (58.8, 0),
           "embeddings": (64.9, 0), "memn2n": (74.9, 2.0), "memn2n_match": (74.9, 0)},
    "T4": {"rule_based": (100, 100), "tfidf": (9.5, 0), "tfidf_type": (17.8, 0), "nearest_neighbour": (28.6, 0),
           "embeddings": (57.2, 0), "memn2n": (59.5, 3.0), "memn2n_match": (100, 100)},
    "T5": {"rule_based": (100, 100), "tfidf": (4.6, 0), "tfidf_type": (8.1, 0), "nearest_neighbour": (57.1, 0),
           "embeddings": (75.4, 0), "memn2n": (96.1, 49.4), "memn2n_match": (93.4, 19.7)},
    "T1 (OOV)": {"rule_based": (100, 100), "tfidf": (5.8, 0), "tfidf_type": (22.4, 0),
                 "nearest_neighbour": (44.1, 0), "embeddings": (60.0, 0), "memn2n": (72.3, 0),
                 "memn2n_match": (96.5, 82.7)},
    "T2 (OOV)": {"rule_based": (100, 100), "tfidf": (3.5, 0), "tfidf_type": (16.8, 0),
                 "nearest_neighbour": (68.3, 0), "embeddings": (68.3, 0), "memn2n": (78.9, 0),
                 "memn2n_match": (94.5, 48.4)},
    "T3 (OOV)": {"rule_based": (100, 100), "tfidf": (8.3, 0), "tfidf_type": (8.3, 0),
                 "nearest_neighbour": (58.8, 0), "embeddings": (65.0, 0), "memn2n": (74.4, 0),
                 "memn2n_match": (75.2, 0)},
    "T4 (OOV)": {"rule_based": (100, 100), "tfidf": (9.8, 0), "tfidf_type": (17.2, 0),
                 "nearest_neighbour": (28.6, 0), "embeddings": (57.0, 0), "memn2n": (57.6, 0),
                 "memn2n_match": (100, 100)},
    "T5 (OOV)": {"rule_based": (100, 100), "tfidf": (4.6, 0), "tfidf_type": (9.0, 0),
                 "nearest_neighbour": (48.4, 0), "embeddings": (58.2, 0), "memn2n": (65.5, 0),
                 "memn2n_match": (77.7, 0)},
    "T6": {"rule_based": (33.3, 0), "tfidf": (1.6, 0), "tfidf_type": (1.6, 0), "nearest_neighbour": (21.9, 0),
           "embeddings": (22.6, 0), "memn2n": (41.1, 0), "memn2n_match": (41.0, 0)},
}

DEFAULT_EPOCHS = 30


@dataclass(frozen=True)
class Fitted:
    """A method fitted on one task: its ranker (None when the method does not apply) and how it was chosen."""

    ranker: Ranker | None
    note: str = ""


Method = Callable[[TaskData, Path, int], Fitted]  # (task, work directory, epochs) -> fitted


@dataclass
class Cell:
    row: str
    method: str
    per_response: float | None
    per_dialog: float | None
    seconds: float
    note: str = ""


def row_name(task: int, split: str) -> str:
    return {"tst-OOV": f"T{task} (OOV)", "dev": f"T{task} (dev)"}.get(split, f"T{task}")


def dev_accuracy(ranker: Ranker, dev: Sequence[TurnExample]) -> float:
    return accuracy_report(dev, best_answers(ranker, dev))["per_response_accuracy"]


def _rule_based(task: TaskData, work: Path, epochs: int) -> Fitted:
    if task.task == 6:
        variants = [DSTC2RuleBased.fit(task, ask_order=order, learned_policy=learned)
                    for order in DSTC2_ASK_ORDERS for learned in (False, True)]
        best = max(variants, key=lambda system: dev_accuracy(system, task.split("dev")))
        return Fitted(best, f"asks {', '.join(best.ask_order)}; "
                            f"{'learned' if best.learned_policy else 'hand-written'} policy (chosen on dev)")
    if task.task > 5:
        return Fitted(None, "no rule-based system for this task")
    return Fitted(RuleBasedSystem.fit(task))


def _tfidf(with_types: bool) -> Method:
    def fit(task: TaskData, work: Path, epochs: int) -> Fitted:
        trn = task.split("trn")
        documents = [e.query for e in trn] + [e.answer for e in trn] + list(task.candidates)
        types = kb_entity_types(task.facts) if with_types else None
        variants = [TfIdfMatch(task.candidates, documents, types, use_history=h) for h in (False, True)]
        best = max(variants, key=lambda model: dev_accuracy(model, task.split("dev")))
        return Fitted(best, f"input: {'whole history' if best.use_history else 'last utterance'} (chosen on dev)")

    return fit


def _nearest_neighbour(task: TaskData, work: Path, epochs: int) -> Fitted:
    return Fitted(NearestNeighbour(task.split("trn")))


# The template ranker of each (work directory, task, epochs) of a run: the ablations share its template model and
# lexicon and train only a filler of their own.
_TEMPLATE_RANKERS: dict[tuple[Path, str, int], tuple[TemplateRanker, dict]] = {}


def _template_ranker(task: TaskData, work: Path, epochs: int) -> tuple[TemplateRanker, dict]:
    key = (work, task.files.label, epochs)
    if key not in _TEMPLATE_RANKERS:
        config = TrainConfig.paper(task.task, epochs=epochs)
        _TEMPLATE_RANKERS[key] = TemplateRanker.fit(task, config, work / f"task{task.task}-template_memn2n")
    return _TEMPLATE_RANKERS[key]


def _template_memn2n(removed: Sequence[str] = ()) -> Method:
    """The template ranker, or (``removed``) an ablation: the same template model, the filler without those
    features."""
    def fit(task: TaskData, work: Path, epochs: int) -> Fitted:
        ranker, summary = _template_ranker(task, work, epochs)
        model = summary["template_model"]
        note = (f"{summary['templates']} templates; template MemN2N best epoch {model['best_epoch']}/{epochs} on dev "
                f"({model['dev_per_response_accuracy']}% of templates), {model['train_seconds']} s")
        if not removed:  # the exported SavedModel: what TF Serving would answer
            return Fitted(SavedModelRanker(work / f"task{task.task}-template_memn2n"),
                          note + f"; filling trained on {summary['filler']['examples']} turns")
        ablated, _ = ranker.with_filler(task.split("trn"), [f for f in ranker.features if f not in removed])
        return Fitted(ablated, f"the template model above; filler without {', '.join(removed)}")

    return fit


def _neural(method: str) -> Method:
    def fit(task: TaskData, work: Path, epochs: int) -> Fitted:
        if method == "embeddings":  # Table 8 as it is (its learning rates work with Adam here)
            config = TrainConfig.paper(task.task, model="embeddings", epochs=epochs)
        else:  # words no training dialog holds (OOV entities) keep a zero embedding: T1 OOV 94.54 -> 97.02
            config = TrainConfig.paper(task.task, match_type=method == "memn2n_match", epochs=epochs,
                                       only_learned_words=True)
        directory = work / f"task{task.task}-{method}"
        summary = train(task, config, out=directory)
        note = (f"best epoch {summary['best_epoch']}/{epochs} on dev ({summary['dev_per_response_accuracy']}%), "
                f"{summary['train_seconds']} s" + ("; unseen words zero" if config.only_learned_words else ""))
        return Fitted(SavedModelRanker(directory), note)

    return fit


def _template_memn2n_learned_filling(task: TaskData, work: Path, epochs: int) -> Fitted:
    """The template model, its candidates ranked by a MemN2N with match type over every candidate: a filler that
    learns everything (the row beside the feature-based filler and its ablations)."""
    ranker, _ = _template_ranker(task, work, epochs)
    config = TrainConfig.paper(task.task, match_type=True, epochs=epochs, only_learned_words=True)
    directory = work / f"task{task.task}-memn2n_filling"
    summary = train(task, config, out=directory, top_k=LEARNED_FILL_DEPTH)
    return Fitted(RankedFilling(ranker, SavedModelRanker(directory)),
                  f"the template model above; filled by a MemN2N with match type (best epoch {summary['best_epoch']}"
                  f"/{epochs} on dev, {summary['dev_per_response_accuracy']}%)")


# The registry of Table 2's methods, in the table's column order.
METHODS: dict[str, Method] = {
    "rule_based": _rule_based, "tfidf": _tfidf(False), "tfidf_type": _tfidf(True),
    "nearest_neighbour": _nearest_neighbour, "embeddings": _neural("embeddings"), "memn2n": _neural("memn2n"),
    "memn2n_match": _neural("memn2n_match"), "template_memn2n": _template_memn2n(),
    **{f"template_memn2n-no_{name}": _template_memn2n((name,)) for name in POLICY_FEATURES},
    "template_memn2n-no_policy_features": _template_memn2n(POLICY_FEATURES),
    "template_memn2n-memn2n_filling": _template_memn2n_learned_filling,
}
# What ``dialog benchmark`` runs when no method is named: the paper's columns.
PAPER_METHODS = ("rule_based", "tfidf", "tfidf_type", "nearest_neighbour", "embeddings", "memn2n", "memn2n_match")


def run_benchmark(data: str | Path, out: str | Path, methods: Sequence[str] = PAPER_METHODS,
                  tasks: Sequence[int] | None = None, epochs: int = DEFAULT_EPOCHS,
                  progress: Callable[[str], None] = print) -> list[Cell]:
    """Every method on every dialog-bAbI task present (``tasks``: only those), written to ``out`` (Markdown) and
    ``out`` with ``.csv``."""
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {list(METHODS)}")
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory(prefix="benchmark-") as work:
        for number, files in discover(data).items():
            if (tasks and number not in tasks) or number == BANKING_TASK:
                continue
            task = TaskData.load(files)
            # Without a test file (a corpus that holds back its test set), report dev: the selection split, so the
            # row is marked "(dev)" and is not comparable with the paper's test figures.
            test_splits = [split for split in ("tst", "tst-OOV") if split in task.examples] or ["dev"]
            for method in methods:
                started = time.perf_counter()
                fitted = METHODS[method](task, Path(work), epochs)
                fit_seconds = time.perf_counter() - started
                for split in test_splits:
                    row, examples = row_name(number, split), task.split(split)
                    if fitted.ranker is None:
                        cells.append(Cell(row, method, None, None, 0.0, fitted.note))
                        continue
                    started = time.perf_counter()
                    result = accuracy_report(examples, best_answers(fitted.ranker, examples))
                    seconds = fit_seconds + time.perf_counter() - started  # fit, then this split's evaluation
                    cells.append(Cell(row, method, result["per_response_accuracy"], result["per_dialog_accuracy"],
                                      seconds, fitted.note))
                    progress(f"{row} {METHOD_TITLES[method]}: {result['per_response_accuracy']} "
                             f"({result['per_dialog_accuracy']}) in {seconds:.0f} s {fitted.note}")
                write_results(cells, out)
        for key in [key for key in _TEMPLATE_RANKERS if key[0] == Path(work)]:  # the run's models go with it
            del _TEMPLATE_RANKERS[key]
    return cells


def benchmark(data: str | Path, out: str | Path, methods: Sequence[str] = PAPER_METHODS, tasks: Sequence[int] = (),
              epochs: int | None = None, progress: Callable[[str], None] = print) -> list[Path]:
    """Table 2 when the corpus holds dialog-bAbI tasks other than banking (``tasks``: only those); the files
    written (none for another layout)."""
    if not [t for t in discover(data) if t != BANKING_TASK and (not tasks or t in tasks)]:
        return []
    run_benchmark(data, out, methods, tasks, epochs or DEFAULT_EPOCHS, progress)
    out = Path(out)
    return [out, out.with_suffix(".csv")]


def _order(row: str) -> tuple[int, int]:
    return (int(row.endswith("(OOV)")) + 2 * int(row.endswith("(dev)")), int(row[1:].split()[0]))


def format_markdown(cells: Sequence[Cell]) -> str:
    rows = sorted({cell.row for cell in cells}, key=_order)
    methods = [m for m in METHODS if any(cell.method == m for cell in cells)]
    by_key = {(cell.row, cell.method): cell for cell in cells}
    lines = ["Table 2: test per-response accuracy % (per-dialog in parentheses); ours, then the paper's.",
             "Train on trn, select on dev, report tst / tst-OOV. MemN2N: Table 9's hops and embedding size, trained "
             f"with Adam at learning rate {TRAINING_DEFAULTS['learning_rate']} in batches of "
             f"{TRAINING_DEFAULTS['batch_size']} (Table 9's 0.01 diverges under Adam). Supervised embeddings: Table "
             "8's settings (margin ranking loss, sampled negatives, history), Adam.", "",
             "| Task | " + " | ".join(METHOD_TITLES[m] for m in methods) + " |",
             "| --- |" + " --- |" * len(methods)]
    for row in rows:
        values = []
        for method in methods:
            cell = by_key.get((row, method))
            paper = PAPER_TABLE2.get(row.removesuffix(" (dev)"), {}).get(method)  # a dev row: the paper's test
            ours = "not run" if cell is None else (
                "n/a" if cell.per_response is None else f"**{cell.per_response:.1f}** ({cell.per_dialog:.1f})")
            values.append(ours + (f" · paper {paper[0]:g} ({paper[1]:g})" if paper else ""))
        lines.append(f"| {row} | " + " | ".join(values) + " |")
    notes = sorted({f"- {cell.row.removesuffix(' (OOV)')} {METHOD_TITLES[cell.method]}: {cell.note}"
                    for cell in cells if cell.note})
    if any(row.endswith("(dev)") for row in rows):
        notes.append("- Rows marked (dev): the corpus has no test file, so dev (also the selection split) is reported, "
                     "beside the paper's test figure.")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def format_csv(cells: Sequence[Cell]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["row", "method", "per_response_accuracy", "per_dialog_accuracy", "paper_per_response",
                     "paper_per_dialog", "seconds", "note"])
    for cell in cells:
        paper = PAPER_TABLE2.get(cell.row, {}).get(cell.method, (None, None))
        writer.writerow([cell.row, cell.method, cell.per_response, cell.per_dialog, paper[0], paper[1],
                         round(cell.seconds, 1), cell.note])
    return buffer.getvalue()


def write_results(cells: Sequence[Cell], out: str | Path) -> None:
    out = Path(out)
    write_text_atomic(out, format_markdown(cells))
    write_text_atomic(out.with_suffix(".csv"), format_csv(cells))
