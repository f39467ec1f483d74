"""``dialog benchmark``: the paper tables of a corpus (Table 2, Tables 8-9, Table 6)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from pipeline.cli.app import main
from pipeline.cli.options import CorpusDirectory, OutputPath, TaskList, check_tasks, refuse_own_input


@main.command()
@click.option("--data", required=True, type=CorpusDirectory())
@click.option("--out", required=True, type=OutputPath(dir_okay=False, path_type=Path),
              help="Markdown table; the CSV goes beside it (same name, .csv).")
@click.option("--methods", default="",
              help="Comma-separated Table 2 methods (default: the paper's, rule_based,tfidf,tfidf_type,"
                   "nearest_neighbour,embeddings,memn2n,memn2n_match; ours: template_memn2n and its ablations "
                   "template_memn2n-no_best_not_offered, -no_rating_rank, -no_attribute_of_on_offer, "
                   "-no_policy_features, -no_dialog_state, -no_call_action, -memn2n_filling). Tables 8-9 always "
                   "run smn, mmn and state_ranker; state_ranker-no_value_state, -no_slot_state, -no_history, "
                   "-no_previous_action add columns. Table 6 (a Movie Dialog corpus): the rows named among "
                   "movie_qa, movie_svd, movie_ir, movie_lstm, movie_embeddings, movie_memn2n, "
                   "movie_joint_embeddings, movie_joint_memn2n (default: every row).")
@click.option("--tasks", type=TaskList(), default="",
              help="Comma-separated task numbers (default: every task present); for Table 6, its columns (1 QA, "
                   "2 Recs, 3 QA+Recs, 4 Reddit), so a paper-scale table can be run a few cells at a time.")
@click.option("--epochs", type=click.IntRange(min=1),
              help="Epochs of the learning models (default: each table's own: 30 for Table 2, the paper's 20 for "
                   "Tables 8-9, each model's for Table 6).")
@click.option("--folds", type=click.IntRange(min=0),
              help="Task 6 (real callers, where dev overstates test): choose each method on this many folds of trn "
                   "(default 5) and report their mean and spread, then dev once; 0 chooses on dev as the other "
                   "tasks do.")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True,
              help="Table 2: the methods that learn, trained with seeds 0 to N-1 (task 6 on folds excepted); Tables "
                   "8-9 (banking): the corpus, then this many minus one more generated with the next seeds and the "
                   "same sizes. Each cell is the mean and standard deviation over them.")
@click.option("--streamed", is_flag=True,
              help="Table 6: train the LSTM, MemN2N and supervised embeddings rows (per task and joint) with the "
                   "pipeline's streamed trainer (tf.Examples written once, a sampled softmax, batches of 512), the "
                   "one that fits the paper's scale, rather than Table 6's own.")
@click.option("--jobs", type=click.IntRange(min=1),
              help="Table 2: run the (task, method) units in this many worker processes, the cores shared among them "
                   "(default: one per core; each job holds a task and its model, so fewer on a machine short of "
                   "memory). 1 runs them in this process.")
def benchmark(data: Path, out: Path, methods: str, tasks: tuple[int, ...], epochs: int | None,
              folds: int | None, seeds: int, streamed: bool, jobs: int | None) -> None:
    """The paper tables of a corpus, ours beside the paper's: Table 2 (dialog-bAbI tasks), Tables 8-9 (banking, to
    OUT-banking.md beside Table 2), Table 6 (a Movie Dialog corpus)."""
    from data.atomic import one_writer_of
    from data.movie.reader import is_movie_corpus
    from models import methods as registry
    from models.babi import reproduce as babi
    from models.banking import reproduce as banking
    from models.jobs import WorkerDied, cores
    from models.movie import reproduce as movie

    if out.suffix.lower() == ".csv":  # the CSV goes to OUT with .csv: the Markdown would take its place
        raise click.BadParameter(f"{out} would be both the Markdown table and the CSV beside it; name the "
                                 "Markdown file (e.g. results.md)", param_hint="--out")
    refuse_own_input(out, "--out", data)
    refuse_own_input(out.with_suffix(".csv"), "--out", data)
    check_tasks(data, tasks)
    if streamed and not is_movie_corpus(data):
        raise click.BadParameter(f"{data} is not a Movie Dialog corpus: only Table 6 has a streamed trainer",
                                 param_hint="--streamed")
    named = [m.strip() for m in methods.split(",") if m.strip()]
    known = registry.names("babi") + registry.names("banking") + registry.names("movie")
    unknown = sorted(set(named) - set(known))
    if unknown:
        raise click.BadParameter(f"unknown methods {unknown}; choose from {known}", param_hint="--methods")
    # Table 2's methods (the paper's when none is named); banking names add columns to Tables 8-9 (ablations).
    chosen = [m for m in named if m in registry.names("babi")] or list(babi.PAPER_METHODS)
    extra = [m for m in named if m in registry.names("banking")]
    progress = lambda line: click.echo(line, err=True)  # noqa: E731
    started = time.perf_counter()
    try:
        with one_writer_of(out):  # two benchmarks writing one table would overwrite each other's files
            written = [*banking.benchmark(data, out, tasks, epochs, progress, seeds, extra),
                       *babi.benchmark(data, out, chosen, tasks, epochs, progress,
                                       babi.DEFAULT_FOLDS if folds is None else folds, seeds,
                                       cores() if jobs is None else jobs),
                       *movie.benchmark(data, out, epochs, progress,
                                        [m for m in named if m in registry.names("movie")], tasks, streamed)]
    except (FileNotFoundError, WorkerDied) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"wrote {', '.join(map(str, written)) or 'nothing'} in {time.perf_counter() - started:.0f} s", err=True)
