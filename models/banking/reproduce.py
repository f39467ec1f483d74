"""Tables 8 and 9 of Majumdar et al. for a corpus holding the banking self-play task: SMN against MMN, and ours.

The methods (``models.banking.methods``, found through the registry) fit on the task loaded once and rank the
test dialogs of ``tst`` (IT) and ``tst-OOT`` (OOT), and the development dialogs of ``dev`` and ``dev-OOP`` (the
development challenge sets: what every choice about out-of-pattern dialogs is made on, reported beside the tests as
the ``dev`` column). Non-OOP rows count every bot turn of the non-OOP test dialogs;
an OOP row counts the bot turns that answer the phenomenon (the challenge turns of the labels sidecar), where the
dialogs differ from anything seen in training. ``dialog benchmark`` calls :func:`benchmark` for every corpus; it
writes these tables when the banking task is among the tasks asked for.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from data.banking.generation import generate, plan_of
from data.banking.labels import CHALLENGES, DEV_CHALLENGES, NONE
from data.layout import BANKING_TASK, TaskFiles, discover
from models import methods as registry
from models.banking.labelled import LabelledExample, labelled_examples, read_task_labels
from models.banking.methods import PAPER
from models.banking.networks import MultipleMemoryNetwork
from models.banking.report import BankingResults, write_banking_results
from models.examples import TaskData
from models.jobs import in_workers
from models.methods import Ranker, Settings, best_answers, note_of, unwrapped
from models.metrics import percent

TEST_SPLITS = ("tst", "tst-OOT")
SCORED_SPLITS = ("dev", DEV_CHALLENGES, *TEST_SPLITS)  # the dev column first: where choices are made
TEMPLATE_GROUPS = ("dev", "IT", "OOT")  # a label's ``templates`` of the scored splits
METHODS = ("smn", "mmn", "state_ranker")
COLUMNS = {"smn": "SMN", "mmn": "MMN", "state_ranker": "Ours"}  # the tables' column of each method
# The order several jobs start the fits in, the longest first (their seconds in docs/tables/banking-tables8-9.md);
# an ablation of ours (state_ranker-no_<group>) costs about what ours does and starts with it.
COSTLIEST_FIRST = ("state_ranker", "mmn", "smn")
# One seed's Table 8 and Table 9 cells, turns counted, seconds of each column's fit, notes.
SeedRun = tuple[dict, dict, dict, dict[str, float], list[str]]


def accuracy(examples: Sequence[LabelledExample], predictions: Sequence[str]) -> float | None:
    """Per-response accuracy of the chosen turns (None when there are none, so the cell says n/a)."""
    if not examples:
        return None
    return round(percent(p == e.example.answer for e, p in zip(examples, predictions, strict=True)), 2)


def counted(turn: LabelledExample) -> bool:
    """Whether some cell of Tables 8-9 counts ``turn``: every turn of a non-OOP dialog does and, of an OOP dialog,
    the turns answering its phenomenon. The others are never scored, so a fit does not rank them (most of an OOP
    dialog's turns: docs/results.md has what ranking them cost)."""
    return turn.challenge == NONE or turn.is_challenge_turn


def score(answers: Mapping[str, Sequence[str]], tests: Sequence[LabelledExample]) -> tuple[dict, dict, dict]:
    """Tables 8 and 9 from each model's first answer to every test example (``answers``: model -> answers)."""
    table8: dict[tuple[str, str, str], float | None] = {}
    table9: dict[tuple[str, str, str], float | None] = {}
    turns: dict[tuple[str, str, bool], int] = {}
    for name, predicted in answers.items():
        predictions = dict(zip((id(e) for e in tests), predicted, strict=True))
        for templates in TEMPLATE_GROUPS:
            if not any(e.templates == templates for e in tests):
                continue
            for challenge in (NONE, *CHALLENGES):
                for multiple in (False, True):
                    chosen = [e for e in tests if e.templates == templates and e.challenge == challenge
                              and e.multiple == multiple and counted(e)]
                    if multiple and not chosen:
                        continue
                    value = accuracy(chosen, [predictions[id(e)] for e in chosen])
                    (table9 if multiple else table8)[(challenge, templates, name)] = value
                    turns[(challenge, templates, multiple)] = len(chosen)
            values = [table8[(c, templates, name)] for c in CHALLENGES if table8.get((c, templates, name)) is not None]
            table8[("average", templates, name)] = round(sum(values) / len(values), 2) if values else None
    return table8, table9, turns


def routed_to_intent(mmn: Ranker, tests: Sequence[LabelledExample]) -> dict[str, float]:
    """Percent of the dev, IT and OOT dialogs MMN's selector sends to the network of their own intent."""
    network = unwrapped(mmn)
    assert isinstance(network, MultipleMemoryNetwork)
    routed = network.route([e.example for e in tests])
    intents = {e.example.dialog_id: e.intent for e in tests}
    templates = {e.example.dialog_id: e.templates for e in tests}
    shares = {}
    for kind in TEMPLATE_GROUPS:
        dialogs = [d for d in routed if templates[d] == kind]
        if not dialogs:
            continue
        shares[kind] = 100.0 * sum(routed[d] == intents[d] for d in dialogs) / max(len(dialogs), 1)
    return shares


def _fit(name: str, task: TaskData, work: Path, settings: Settings) -> tuple[Ranker, float]:
    """The method ``name`` fitted on ``task`` in its own directory under ``work``, and the seconds it took."""
    started = time.perf_counter()
    ranker = registry.get(name, PAPER).fit(task, work / name, settings)
    return ranker, time.perf_counter() - started


def seed_corpora(files: TaskFiles, seeds: int, directory: Path) -> Iterator[TaskFiles]:
    """``files``, then the same corpus generated with each of the next ``seeds - 1`` seeds under ``directory``
    (the plan read back from the labels sidecar: its seed and sizes)."""
    yield files
    plan = plan_of(read_task_labels(files))
    for offset in range(1, seeds):
        out = directory / f"corpus-seed-{plan.seed + offset}"
        generate(replace(plan, seed=plan.seed + offset), out)
        yield discover(out)[BANKING_TASK]


@dataclass(frozen=True)
class _Scored:
    """One method fitted on one seed's corpus and scored where it ran: its column's Table 8 and 9 cells, the turns
    each cell counts, the seconds the fit took, its note and (MMN) the share of dialogs its selector routed to their
    intent. A worker sends these back, not its answers, so the parent never loads a corpus to score them."""

    table8: dict
    table9: dict
    turns: dict
    column: str
    seconds: float
    note: str
    routing: dict[str, float]


def _loaded(files: TaskFiles) -> tuple[TaskData, list[LabelledExample], int]:
    """The task, its scored examples (dev, dev-OOP, then the tests) and the corpus's seed."""
    task = TaskData.load(files)
    labels = read_task_labels(files)
    tests = [e for split in SCORED_SPLITS if split in files.splits for e in labelled_examples(task, split, labels)]
    return task, tests, plan_of(labels).seed


def _answer(name: str, task: TaskData, tests: Sequence[LabelledExample], seed: int, epochs: int | None,
            directory: Path) -> _Scored:
    """``name`` fitted on ``task`` (trained with the corpus's ``seed``) and its cells on ``tests``."""
    column = COLUMNS.get(name, name)
    ranker, seconds = _fit(name, task, directory, Settings(epochs=epochs, seed=seed))
    scored = [e for e in tests if counted(e)]
    table8, table9, turns = score({column: best_answers(ranker, [e.example for e in scored])}, scored)
    note, routing = f"seed {seed}, {column}: {note_of(ranker)}", {}
    if name == "mmn":
        routing = routed_to_intent(ranker, tests)
        note += "; dialogs routed to their intent: " + ", ".join(f"{kind} {share:.2f}%"
                                                                  for kind, share in routing.items())
    return _Scored(table8, table9, turns, column, seconds, f"{note}; {seconds:.0f} s", routing)


def _answer_in_worker(files: TaskFiles, name: str, epochs: int | None, directory: Path) -> _Scored:
    """:func:`_answer` in a worker process, the corpus loaded there (each worker loads what it runs)."""
    task, tests, seed = _loaded(files)
    return _answer(name, task, tests, seed, epochs, directory)


def _seed_tables(scored: Sequence[_Scored]) -> SeedRun:
    """One seed's Tables 8-9, turns, seconds and notes from its methods' cells (in the methods' order)."""
    table8: dict = {}
    table9: dict = {}
    for one in scored:
        table8.update(one.table8)
        table9.update(one.table9)
    for one in scored:  # after every column's cells, as the tables list them
        for kind, share in one.routing.items():
            table8[("routing", kind, one.column)] = round(share, 2)
    return table8, table9, scored[0].turns, {one.column: one.seconds for one in scored}, [one.note for one in scored]


def _run_seed(files: TaskFiles, epochs: int | None, methods: Sequence[str], directory: Path,
              progress: Callable[[str], None]) -> SeedRun:
    """The methods fitted on one corpus (trained with its seed) and scored, in this process: Tables 8-9, turns,
    seconds, notes."""
    task, tests, seed = _loaded(files)
    scored = []
    for name in methods:
        scored.append(_answer(name, task, tests, seed, epochs, directory))
        progress(scored[-1].note)
    return _seed_tables(scored)


def _in_workers(corpora: Sequence[TaskFiles], epochs: int | None, methods: Sequence[str], directory: Path,
                jobs: int, progress: Callable[[str], None]) -> list[SeedRun]:
    """Every (seed, method) fit in ``jobs`` worker processes, the costliest methods first (so that the last fit
    to end is a short one), each note printed as its fit ends; the seeds' tables once every fit has ended."""
    calls = [(files, name, epochs, directory / f"models-{index}") for index, files in enumerate(corpora)
             for name in methods]
    cost = {name: rank for rank, name in enumerate(COSTLIEST_FIRST)}
    order = sorted(range(len(calls)), key=lambda k: (cost.get(calls[k][1].partition("-")[0], len(cost)), k))
    scored: dict[int, _Scored] = {}
    for index, result in in_workers(_answer_in_worker, calls, jobs, order):
        progress(result.note)
        scored[index] = result
    return [_seed_tables([scored[index * len(methods) + m] for m in range(len(methods))])
            for index in range(len(corpora))]


def _mean_and_spread(runs: Sequence[Mapping[Any, float | None]]) -> tuple[dict, dict]:
    """Each cell's mean over the runs and its sample standard deviation (None from a single run or an n/a)."""
    means, spreads = {}, {}
    for key in runs[0]:
        values = [run.get(key) for run in runs]
        if any(value is None for value in values):
            means[key], spreads[key] = None, None
            continue
        means[key] = round(statistics.fmean(values), 2)
        spreads[key] = round(statistics.stdev(values), 2) if len(values) > 1 else None
    return means, spreads


def run_banking_benchmark(files: TaskFiles, out: str | Path, epochs: int | None = None, seeds: int = 1,
                          methods: Sequence[str] = METHODS, work: str | Path | None = None,
                          progress: Callable[[str], None] = print, jobs: int = 1) -> BankingResults:
    """Fit ``methods`` (SMN, MMN and ours by default; an ablation of ours adds a column) on ``trn`` (best epoch on
    ``dev``, at most ``epochs``: None for the paper's 20) of the corpus and of ``seeds - 1`` more generated with
    the next seeds, each trained with its corpus's seed; write Tables 8 and 9 as each cell's mean and standard
    deviation over the seeds (Markdown at ``out``, CSV beside it). With ``jobs`` > 1 the (seed, method) fits run in
    that many worker processes (``models.jobs``), the cores shared among them."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="banking-", dir=work) as directory:
        if jobs <= 1:
            for index, corpus in enumerate(seed_corpora(files, seeds, Path(directory))):
                runs.append(_run_seed(corpus, epochs, methods, Path(directory) / f"models-{index}", progress))
        else:
            corpora = list(seed_corpora(files, seeds, Path(directory)))
            runs = _in_workers(corpora, epochs, methods, Path(directory), min(jobs, len(corpora) * len(methods)),
                               progress)
    table8, spread8 = _mean_and_spread([run[0] for run in runs])
    table9, spread9 = _mean_and_spread([run[1] for run in runs])
    turns = {key: round(statistics.fmean(run[2][key] for run in runs)) for key in runs[0][2]}
    seconds = {name: round(sum(run[3][name] for run in runs), 1) for name in runs[0][3]}
    results = BankingResults(table8, table9, turns, seconds, [note for run in runs for note in run[4]],
                             seeds=len(runs), spread8=spread8, spread9=spread9,
                             readings=plan_of(read_task_labels(files)).readings.changed())
    write_banking_results(results, out)
    return results


def output_path(out: Path, several: bool) -> Path:
    """Where the tables go: ``out`` itself, or ``OUT-banking.md`` when another paper's table is written to ``out``
    (a corpus holding tasks of several papers)."""
    return out.with_name(f"{out.stem}-banking{out.suffix}") if several else out


def benchmark(data: str | Path, out: str | Path, epochs: int | None = None, progress: Callable[[str], None] = print,
              seeds: int = 1, extra: Sequence[str] = (), several: bool = False, jobs: int = 1) -> list[Path]:
    """Tables 8-9 of the corpus' banking task, over ``seeds`` corpus and training seeds; the files written.
    ``epochs`` is capped at the paper's 20; ``extra`` methods (the state ranker's ablations) get columns of their
    own; ``several``: another paper's table takes ``out`` (:func:`output_path`)."""
    path = output_path(Path(out), several)
    run_banking_benchmark(discover(data)[BANKING_TASK], path, epochs=epochs, seeds=seeds,
                          methods=(*METHODS, *(m for m in extra if m not in METHODS)), progress=progress,
                          jobs=jobs)
    return [path, path.with_suffix(".csv")]
