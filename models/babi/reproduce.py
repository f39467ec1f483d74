"""Table 2 of Bordes et al. (2017) for a corpus directory: every method, every task present, beside the paper.

Each method (``models.babi.methods``, found through the registry) fits on a task loaded once
(:class:`~models.examples.TaskData`: every split read a single time and handed to every method), picks its variant
(or its best epoch) on ``dev``, and its ranker is reported on ``tst`` and ``tst-OOV``. Task 6 chooses on folds of
trn instead (``models.babi.folds``). With several jobs (``models.jobs``) the (task, method) units run in worker
processes side by side, each loading its task. Results are rewritten (atomically) after every unit, so an interrupted
run keeps what it finished. The banking task (7) has Tables 8-9 of its own paper (``models.banking``) and is left out.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from data.layout import TaskFiles, discover
from models import methods as registry
from models.babi.answer_kinds import KINDS, accuracy_by_kind, decisions_by_kind
from models.babi.folds import DEFAULT_FOLDS, FoldRun, bot_runs, fold_runs, mean_and_spread
from models.babi.methods import PAPER_METHODS
from models.babi.report import FOLD_TASKS, Cell, row_name, title, write_results
from models.examples import TaskData, TurnExample
from models.jobs import WorkerDied, in_workers
from models.methods import NotApplicable, Ranker, Settings, best_answers, for_split, note_of
from models.metrics import accuracy_report
from models.training import OOV_DEV_SPLIT, oov_dev_examples


def _scored(row: str, method: str, ranker: Ranker, examples: Sequence[TurnExample], seconds: float,
            note: str) -> Cell:
    """The cell of ``ranker`` on ``examples``; ``seconds``: the fit's, this evaluation's are added."""
    started = time.perf_counter()
    answers = best_answers(ranker, examples)
    result = accuracy_report(examples, answers)
    kinds, decided = ({kind: (value, 0.0, turns) for kind, (value, turns) in by_kind(examples, answers).items()}
                      for by_kind in (accuracy_by_kind, decisions_by_kind))
    return Cell(row, method, result["per_response_accuracy"], result["per_dialog_accuracy"],
                seconds + time.perf_counter() - started, note, kinds=kinds, decided=decided)


def _mean_by_kind(per_cell: Sequence[dict[str, tuple[float, float, int]]], pooled: bool
                  ) -> dict[str, tuple[float, float, int]]:
    """Per kind, the mean and spread over the cells (``per_cell``: each cell's kinds or decisions) and the turns:
    (``pooled``) held-out runs, each of other turns, summed, the kinds any run has; else seeds scored on the same
    turns, the kinds every seed has."""
    means = {}
    for kind in KINDS:
        values = [by_kind[kind] for by_kind in per_cell if kind in by_kind]
        if values and (pooled or len(values) == len(per_cell)):
            turns = sum(v[2] for v in values) if pooled else values[0][2]
            means[kind] = (*mean_and_spread([v[0] for v in values]), turns)
    return means


def _fit(method: str, task: TaskData, work: Path, settings: Settings) -> tuple[Ranker | None, str]:
    """``method`` fitted on ``task`` in its own directory under ``work``: its ranker and note (None and the reason
    when it does not apply)."""
    try:
        ranker = registry.get(method, "babi").fit(task, work / f"task{task.task}-{method}", settings)
    except NotApplicable as reason:
        return None, str(reason)
    return ranker, note_of(ranker)


def _seed_cells(method: str, task: TaskData, work: Path, settings: Settings,
                splits: Mapping[str, Sequence[TurnExample]], seeds: int, progress: Callable[[str], None]
                ) -> list[Cell]:
    """``method`` trained with seeds 0 .. ``seeds`` - 1 (each chosen on dev as a single run is): a cell per split
    with the mean over seeds and their standard deviation (``spread``), per kind too."""
    runs: dict[str, list[Cell]] = {split: [] for split in splits}
    notes = []
    for seed in range(seeds):
        started = time.perf_counter()
        ranker, note = _fit(method, task, work / f"seed{seed}", replace(settings, seed=seed))
        if ranker is None:
            return [Cell(row_name(task.task, split), method, None, None, 0.0, note) for split in splits]
        fit_seconds = time.perf_counter() - started
        notes.append(f"seed {seed}: {note}")
        for split, examples in splits.items():
            runs[split].append(_scored(row_name(task.task, split), method, for_split(ranker, split), examples,
                                       fit_seconds, note))
        progress(f"T{task.task} {title(method)} seed {seed}: "
                 + ", ".join(f"{split} {runs[split][-1].per_response}" for split in splits))
    cells = []
    for split, scored in runs.items():
        per_response, spread = mean_and_spread([cell.per_response for cell in scored])
        cells.append(Cell(row_name(task.task, split), method, per_response,
                          mean_and_spread([cell.per_dialog for cell in scored])[0],
                          sum(cell.seconds for cell in scored), f"mean over seeds 0-{seeds - 1}; " + "; ".join(notes),
                          spread, _mean_by_kind([c.kinds for c in scored], False),
                          _mean_by_kind([c.decided for c in scored], False)))
    return cells


def _held_out_cell(task: TaskData, method: str, work: Path, settings: Settings, runs: Sequence[FoldRun], split: str,
                   what: str, chosen_on: str, progress: Callable[[str], None]) -> Cell:
    """``method`` run once per run of ``runs`` (each chosen on its dev, ``chosen_on`` in the notes, scored on its
    tst): the mean over the runs' held-out dialogs, in the row of ``split`` ("folds", "new_bot"); ``what`` says what
    the runs held out."""
    started, held_out = time.perf_counter(), []
    on_run = replace(settings, chosen_on=chosen_on)
    for run in runs:
        ranker, note = _fit(method, run.task, work / run.name.replace("/", "-").replace(" ", ""), on_run)
        if ranker is None:
            return Cell(row_name(task.task, split), method, None, None, 0.0, note)
        held_out.append(_scored(row_name(task.task, split), method, ranker, run.task.split("tst"), 0.0, ""))
        progress(f"T{task.task} {title(method)} {run.name}: {held_out[-1].per_response} "
                 f"({held_out[-1].per_dialog}) {note}")
    per_response, spread = mean_and_spread([cell.per_response for cell in held_out])
    return Cell(row_name(task.task, split), method, per_response,
                mean_and_spread([cell.per_dialog for cell in held_out])[0], time.perf_counter() - started,
                held_out_note(what, [cell.per_response for cell in held_out]), spread,
                _mean_by_kind([c.kinds for c in held_out], True), _mean_by_kind([c.decided for c in held_out], True))


def held_out_note(what: str, figures: Sequence[float]) -> str:
    """The note of a (folds) or (new bot) cell: what its runs held out, then each run's figure in run order, which
    ``models.babi.task6_report.held_out_figures`` reads back for the per-style block."""
    return f"mean over {len(figures)} {what}: " + ", ".join(f"{figure}" for figure in figures)


def _fold_cells(task: TaskData, method: str, work: Path, settings: Settings, runs: Sequence[FoldRun],
                progress: Callable[[str], None], new_bot: Sequence[FoldRun] = ()) -> list[Cell]:
    """``method`` chosen on folds of trn (``runs``: models.babi.folds, made once per task so that every method
    of the run sees the same fold tasks, and the ablations the template model of each): the (folds) row, the (new
    bot) row when ``new_bot`` runs are given (``models.babi.folds.bot_runs``), then the final model's rows on dev
    and on the test files present."""
    started = time.perf_counter()
    *fold_tasks, last = runs
    cells = [_held_out_cell(task, method, work, settings, fold_tasks, "folds",
                            "held-out folds of trn, each chosen on the next fold", "the next fold", progress)]
    if cells[0].per_response is None:
        return cells
    if new_bot:
        cells.append(_held_out_cell(task, method, work, settings, new_bot, "new_bot",
                                    "held-out bot wording styles of trn, each chosen on a fifth of the others",
                                    "a fifth of the other style", progress))
    final, note = _fit(method, last.task, work / last.name, replace(settings, chosen_on="a fold of trn"))
    assert final is not None  # the method applied to every fold run
    note = "; ".join(filter(None, [note, "dev not used to choose"]))
    for split in [s for s in ("dev", "tst", "tst-OOV") if s in task.examples]:
        cells.append(_scored(row_name(task.task, split), method, for_split(final, split), task.split(split),
                             time.perf_counter() - started, note))
    return cells


def _new_bot_runs(task: TaskData, progress: Callable[[str], None]) -> list[FoldRun]:
    """The runs of the (new bot) row (``models.babi.folds.bot_runs``); none, said, where trn shows no two styles."""
    try:
        return bot_runs(task)
    except ValueError as error:
        progress(f"T{task.task}: no (new bot) row: {error}")
        return []


@dataclass(frozen=True)
class _Unit:
    """Methods of one task run in one process: a method and its ablations (``template_memn2n-no_x``), so the
    ablations reuse the model they ablate (``Settings.memo``); ``first``: the task's first unit, which says what
    applies to the whole task (too few dialogs for folds, no (new bot) row)."""

    number: int
    files: TaskFiles
    methods: tuple[str, ...]
    first: bool


def _units(data: str | Path, methods: Sequence[str], tasks: Sequence[int] | None) -> list[_Unit]:
    units = []
    for number, files in discover(data).items():
        if tasks and number not in tasks:
            continue
        families: dict[str, list[str]] = {}
        for method in methods:
            families.setdefault(method.split("-")[0], []).append(method)
        units += [_Unit(number, files, tuple(group), index == 0) for index, group in enumerate(families.values())]
    return units


@dataclass(frozen=True)
class _TaskPlan:
    """A task loaded once for its methods: the splits its cells report, and its fold runs (task 6)."""

    task: TaskData
    test_splits: dict[str, Sequence[TurnExample]]
    runs: list[FoldRun]
    new_bot: list[FoldRun]


def _plan(unit: _Unit, folds: int, progress: Callable[[str], None]) -> _TaskPlan:
    number, task = unit.number, TaskData.load(unit.files)
    # Without a test file (a corpus that holds back its test set), report dev: the selection split, so the row is
    # marked "(dev)" and is not comparable with the paper's test figures; and the OOV dev set (data.oov_dev) in the
    # OOV test set's place, where the task's KB has entities to swap in.
    test_splits = {split: task.split(split) for split in ("tst", "tst-OOV") if split in task.examples}
    if not test_splits:
        test_splits = {"dev": task.split("dev")}
        oov = oov_dev_examples(task) if number not in FOLD_TASKS else None
        if oov:
            test_splits[OOV_DEV_SPLIT] = oov
    wants_folds = bool(folds) and number in FOLD_TASKS
    use_folds = wants_folds and len(task.dialogs["trn"]) >= 2 * folds
    if wants_folds and not use_folds:
        progress(f"T{number}: {len(task.dialogs['trn'])} training dialogs, too few for {folds} folds of at least "
                 "two: choosing on dev")
    return _TaskPlan(task, test_splits, fold_runs(task, folds) if use_folds else [],
                     _new_bot_runs(task, progress) if use_folds else [])


def _unit_cells(unit: _Unit, plan: _TaskPlan, work: Path, settings: Settings, seeds: int,
                progress: Callable[[str], None]) -> list[Cell]:
    """The cells of ``unit``'s methods, each fitted and scored on the splits of ``plan``."""
    task, number, cells = plan.task, unit.number, []
    for method in unit.methods:
        if plan.runs:
            new = _fold_cells(task, method, work, settings, plan.runs, progress, plan.new_bot)
        elif seeds > 1 and registry.get(method, "babi").seeded:
            new = _seed_cells(method, task, work / method, settings, plan.test_splits, seeds, progress)
        else:
            started = time.perf_counter()
            ranker, note = _fit(method, task, work, settings)
            fit_seconds = time.perf_counter() - started
            new = [Cell(row_name(number, split), method, None, None, 0.0, note) if ranker is None else
                   _scored(row_name(number, split), method, for_split(ranker, split), examples, fit_seconds, note)
                   for split, examples in plan.test_splits.items()]
        for cell in new:
            if cell.per_response is not None:
                progress(f"{cell.row} {title(method)}: {cell.per_response} ({cell.per_dialog})"
                         + (f" spread {cell.spread}" if cell.spread is not None else "")
                         + f" in {cell.seconds:.0f} s {cell.note}")
        cells += new
    return cells


def _unit_in_worker(unit: _Unit, work: Path, epochs: int | None, folds: int, seeds: int
                    ) -> tuple[list[Cell], list[str]]:
    """``unit`` in a worker process: its task loaded there (each worker loads what it runs), its lines returned with
    its cells, for the parent to print."""
    lines: list[str] = []
    plan = _plan(unit, folds, lines.append if unit.first else lambda line: None)
    return _unit_cells(unit, plan, work, Settings(epochs=epochs, evaluate_dev=False), seeds, lines.append), lines


def _cost(unit: _Unit) -> tuple[bool, int]:
    """Longest first, so that the last unit to end is a short one: the units that learn before the others, each
    group by the size of its training file (known without loading the task)."""
    learns = any(registry.get(method, "babi").seeded for method in unit.methods)
    trn = unit.files.splits.get("trn")
    return not learns, -(trn.stat().st_size if trn else 0)


def run_benchmark(data: str | Path, out: str | Path, methods: Sequence[str] = PAPER_METHODS,
                  tasks: Sequence[int] | None = None, epochs: int | None = None,
                  progress: Callable[[str], None] = print, folds: int = DEFAULT_FOLDS, seeds: int = 1,
                  jobs: int = 1) -> list[Cell]:
    """Every method on every dialog-bAbI task present (``tasks``: only those), written to ``out`` (Markdown) and
    ``out`` with ``.csv``. The tasks of :data:`FOLD_TASKS` choose on ``folds`` folds of trn (0: on dev, as the
    others). With ``seeds`` > 1 the methods that learn are trained with seeds 0 .. seeds - 1 and each cell is the
    mean and standard deviation over them (on the tasks chosen on dev; fold tasks already report a spread).

    With ``jobs`` > 1 the (task, method) units run in that many worker processes, longest first, the cores shared
    among them; each unit's lines are printed when it ends, and the table is rewritten then, in its own order."""
    known = registry.names("babi")
    unknown = sorted(set(methods) - set(known))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {known}")
    units = _units(data, methods, tasks)
    done: dict[int, list[Cell]] = {}

    def finished(index: int, cells: list[Cell]) -> None:
        done[index] = cells
        write_results([cell for i in sorted(done) for cell in done[i]], out)

    with tempfile.TemporaryDirectory(prefix="benchmark-") as work:
        jobs = min(jobs, len(units))
        if jobs <= 1:
            # The table scores the splits it reports itself: ranking dev once more for a summary would be wasted.
            # The memo lives as long as this run: the ablations reuse the template model they ablate.
            settings, plan = Settings(epochs=epochs, evaluate_dev=False), None
            for index, unit in enumerate(units):
                if unit.first or plan is None:
                    plan = _plan(unit, folds, progress)
                finished(index, _unit_cells(unit, plan, Path(work), settings, seeds, progress))
        else:
            calls = [(unit, Path(work), epochs, folds, seeds) for unit in units]
            order = sorted(range(len(units)), key=lambda i: _cost(units[i]))
            try:
                for index, (cells, lines) in in_workers(_unit_in_worker, calls, jobs, order):
                    for line in lines:
                        progress(line)
                    finished(index, cells)
            except WorkerDied as error:
                raise WorkerDied(f"{error}; {out} holds the units that ended") from None
    return [cell for i in sorted(done) for cell in done[i]]


def benchmark(data: str | Path, out: str | Path, methods: Sequence[str] = PAPER_METHODS, tasks: Sequence[int] = (),
              epochs: int | None = None, progress: Callable[[str], None] = print,
              folds: int = DEFAULT_FOLDS, seeds: int = 1, jobs: int = 1) -> list[Path]:
    """Table 2 of the corpus' ``tasks`` (the lookup's: ``models.papers``); the files written."""
    run_benchmark(data, out, methods, tasks, epochs, progress, folds, seeds, jobs)
    out = Path(out)
    return [out, out.with_suffix(".csv")]


