"""``dialog benchmark``: the paper tables of a corpus (Table 2, Tables 8-9, Table 6)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from pipeline.cli.app import main
from pipeline.cli.options import CorpusDirectory, OutputPath, TaskList, corpus_papers, refuse_own_input


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
                   "-no_last_line, -no_state_counts, -no_dialog_state, -no_act_term, -no_beside_call, -no_goal, "
                   "-no_act_mask add columns. Table 6 (a Movie Dialog corpus): the rows named among "
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
@click.option("--seeds", type=click.IntRange(min=1),
              help="Table 2: the methods that learn, trained with seeds 0 to N-1 (task 6 on folds excepted); Tables "
                   "8-9 (banking): the corpus, then this many minus one more generated with the next seeds and the "
                   "same sizes. Each cell is the mean and standard deviation over them.")
@click.option("--streamed", is_flag=True,
              help="Table 6: train the LSTM, MemN2N and supervised embeddings rows (per task and joint) with the "
                   "pipeline's streamed trainer (tf.Examples written once, a sampled softmax, batches of 512), the "
                   "one that fits the paper's scale, rather than Table 6's own.")
@click.option("--records", type=OutputPath(file_okay=False, path_type=Path),
              help="Table 6 with --streamed: keep the tf.Example files the streamed rows are trained from in this "
                   "directory, and take them from there in the next run of the same corpus (files written from "
                   "other or since changed corpus files are written again): at the paper's scale each run writes "
                   "6M exchanges otherwise.")
@click.option("--jobs", type=click.IntRange(min=1),
              help="Table 2: run the (task, method) units in this many worker processes, the cores shared among them; "
                   "Tables 8-9: the (seed, method) fits the same way (default: one per core; each job holds a task "
                   "and its model, so fewer on a machine short of memory). 1 runs them in this process.")
def benchmark(data: Path, out: Path, methods: str, tasks: tuple[int, ...], epochs: int | None,
              folds: int | None, seeds: int | None, streamed: bool, records: Path | None, jobs: int | None) -> None:
    """The paper tables of a corpus, ours beside the paper's: those of each paper whose tasks it holds (Table 2 for
    dialog bAbI, Tables 8-9 for banking, to OUT-banking.md when Table 2 takes OUT; Table 6 for Movie Dialog)."""
    from data.atomic import one_writer_of
    from models import methods as registry
    from models.jobs import WorkerDied
    from models.papers import TableRequest

    if out.suffix.lower() == ".csv":  # the CSV goes to OUT with .csv: the Markdown would take its place
        raise click.BadParameter(f"{out} would be both the Markdown table and the CSV beside it; name the "
                                 "Markdown file (e.g. results.md)", param_hint="--out")
    refuse_own_input(out, "--out", data)
    refuse_own_input(out.with_suffix(".csv"), "--out", data)
    if records is not None:
        refuse_own_input(records, "--records", data)
        if Path(data).resolve() in Path(records).resolve().parents:
            raise click.BadParameter(f"{records} is inside the corpus {data}; keep the records elsewhere",
                                     param_hint="--records")
        if not streamed:
            raise click.BadParameter("only the streamed rows (--streamed) are trained from records",
                                     param_hint="--records")
    found = corpus_papers(data, tasks)
    flags = {"seeds": seeds, "folds": folds, "streamed": streamed or None, "records": records, "jobs": jobs}
    for flag, value in flags.items():
        if value is not None and not any(flag in paper.table_flags for paper, _ in found):
            raise click.BadParameter(f"the tables of {' and '.join(p.title for p, _ in found)} have no --{flag}",
                                     param_hint=f"--{flag}")
    named = [m.strip() for m in methods.split(",") if m.strip()]
    known = [name for paper, _ in found for name in registry.names(paper.name)]
    unknown = [m for m in named if m not in known]
    if unknown:
        raise click.BadParameter(f"unknown methods {unknown} for {', '.join(p.title for p, _ in found)}; choose "
                                 f"from {known}", param_hint="--methods")
    progress = lambda line: click.echo(line, err=True)  # noqa: E731
    started = time.perf_counter()
    written: list[Path] = []
    try:
        with one_writer_of(out):  # two benchmarks writing one table would overwrite each other's files
            for paper, held in found:
                own = tuple(m for m in named if m in registry.names(paper.name))
                written += paper.tables(TableRequest(
                    data, out, held, own, epochs, progress=progress, several=len(found) > 1,
                    **{flag: value for flag, value in flags.items() if flag in paper.table_flags}))
    except (FileNotFoundError, FileExistsError, WorkerDied) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"wrote {', '.join(map(str, written)) or 'nothing'} in {time.perf_counter() - started:.0f} s", err=True)
