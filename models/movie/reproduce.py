"""Table 6 of Dodge et al. for a corpus in the Movie Dialog layout: each method's hits@k beside the paper's.

The rows are the registered Movie Dialog methods (``models.movie.methods``) in registration order. Each fits on
``train`` and chooses what it chooses on ``dev``; here its ranker is scored on ``test`` with the paper's k per task
(hits@1 QA, hits@100 recommendation, hits@10 QA+recommendation and discussion), each split ranked among its own
candidates (task 4: the split's candidate file). A method fits on each task present, a joint model once on every
learned task; a method with nothing to offer on a task (:class:`~models.methods.NotApplicable`) leaves it n/a.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from data.movie.reader import MovieCorpus, discover_movie_corpus
from models.methods import NotApplicable, Registered, Settings, get, names, note_of, unwrapped
from models.movie.baselines import DiscussionIr
from models.movie.examples import MovieData
from models.movie.methods import JOINT, PAPER, MovieTask, hits, learned_tasks
from models.movie.paper import PAPER_K, TASK_TITLES
from models.movie.report import Row, by_exchange, write_table6
from models.movie.streamed_fit import RECORDS

# The models trained per task whose notes break tasks 3 and 4 down by exchange.
BY_EXCHANGE = ("movie_lstm", "movie_embeddings", "movie_memn2n")


def movie_methods() -> list[Registered]:
    """The registered Movie Dialog methods, in registration order: Table 6's rows."""
    return [get(name, PAPER) for name in names(PAPER)]


def table10(ranker: DiscussionIr, data: MovieData) -> str:
    """The paper's Table 10 comparison: IR's test hits@k with the query alone and with the history."""
    test = {history: hits(replace(ranker, use_history=history), data, 4, "test")[0] for history in (True, False)}
    return (f"test hits@{PAPER_K[4]} with the query alone {test[False]}, with the history {test[True]} "
            f"(the paper's Table 10 comparison)")


def run_method(method: Registered, data: MovieData, work: Path, settings: Settings,
               columns: Sequence[int] = (), streamed: bool = False) -> Row:
    """``method``'s row: fitted on each task (or, joint, once on every learned task) and scored on each test set;
    ``columns`` narrows both to those tasks (a joint model then trains on the learned ones among them);
    ``streamed``: the MemN2N and embeddings rows by the pipeline's streamed trainer."""
    started = time.perf_counter()
    wanted = [t for t in TASK_TITLES if t in data.corpus.tasks and (not columns or t in columns)]
    if method.name in JOINT:
        task_sets = [tuple(t for t in learned_tasks(data.corpus) if t in wanted)]
    else:
        task_sets = [(t,) for t in wanted]
    values, notes, cell_notes = {}, [], {}
    for tasks in task_sets:
        try:
            fitted = method.fit(MovieTask(data, tasks, streamed), work / "-".join(map(str, tasks)), settings)
        except NotApplicable:
            continue
        note = note_of(fitted)
        for task in tasks:
            values[task], ranked = hits(fitted, data, task, "test")
            if method.name in BY_EXCHANGE and task in (3, 4):
                note += f"; by exchange: {by_exchange(data.examples(task, 'test'), ranked, PAPER_K[task])}"
        ranker = unwrapped(fitted)
        if isinstance(ranker, DiscussionIr):
            note += f"; {table10(ranker, data)}"
        if note:
            notes.append(note)
            cell_notes.update({task: note for task in tasks})
    return Row(method.title, values, time.perf_counter() - started, notes, cell_notes)


def run_movie_benchmark(corpus: MovieCorpus, out: str | Path, progress: Callable[[str], None] = print,
                        epochs: int | None = None, methods: Sequence[str] = (), tasks: Sequence[int] = (),
                        streamed: bool = False, records: Path | None = None) -> list[Row]:
    """The methods of Table 6 on the corpus (``methods``: those registered names, in the table's order; default
    every row, the others marked not run; ``tasks``: those columns, default every task of the corpus); ``epochs``
    overrides each learning model's own; ``streamed`` trains the MemN2N and embeddings rows with the streamed
    trainer, from the task files written as tf.Examples in ``records`` (kept for the next run; default: a
    temporary directory for this table)."""
    absent = sorted(set(tasks) - set(corpus.tasks))
    if absent:
        raise FileNotFoundError(f"{corpus.root} has no files of task {', '.join(map(str, absent))} (found tasks "
                                f"{', '.join(map(str, sorted(corpus.tasks)))})")
    data = MovieData(corpus)
    rows = []
    with tempfile.TemporaryDirectory(prefix="movie-records-") as scratch:
        # The streamed rows write each task file as tf.Examples once for the whole table (or once for every run
        # given the same ``records``: a paper-scale table is made a few cells at a time).
        settings = Settings(epochs=epochs, memo={RECORDS: Path(records or scratch)})
        for method in movie_methods():
            if methods and method.name not in methods:
                continue
            with tempfile.TemporaryDirectory(prefix=f"{method.name}-") as work:
                rows.append(run_method(method, data, Path(work), settings, tasks, streamed))
            progress(f"{rows[-1].method}: {rows[-1].values} in {rows[-1].seconds:.1f} s")
    write_table6(out, rows, tasks, streamed)
    return rows


def benchmark(data: str | Path, out: str | Path, epochs: int | None = None,
              progress: Callable[[str], None] = print, methods: Sequence[str] = (),
              tasks: Sequence[int] = (), streamed: bool = False, records: Path | None = None) -> list[Path]:
    """Table 6 of a corpus in the Movie Dialog layout; the files written (the Markdown and its CSV). ``epochs``
    overrides each learning model's own; ``methods`` picks rows and ``tasks`` columns (a paper-scale table is run a
    few cells at a time, then assembled: ``models.movie.report.assemble_table6``); ``streamed`` trains the MemN2N
    and embeddings rows with the pipeline's streamed trainer, the one that fits the paper's scale (its tf.Example
    files kept in ``records`` when given). A directory with
    no task file, or a task it lacks, is a :class:`FileNotFoundError` saying what is missing."""
    try:
        corpus = discover_movie_corpus(data)
    except ValueError as error:
        raise FileNotFoundError(str(error)) from None
    run_movie_benchmark(corpus, out, progress=progress, epochs=epochs, methods=methods, tasks=tasks,
                        streamed=streamed, records=records)
    return [Path(out), Path(out).with_suffix(".csv")]
