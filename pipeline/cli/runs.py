"""The TFX pipeline's commands: ``pipeline`` runs it locally, ``report`` writes a run's HTML page."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import click

from models import papers
from pipeline.cli.app import main
from pipeline.cli.options import BeamArg, CorpusDirectory, OutputPath, TaskList, corpus_paper


@main.command("pipeline")
@click.option("--quick", is_flag=True,
              help="The paper's quick profile (few epochs; bAbI: the template ranker and MemN2N); default: full.")
@click.option("--root", type=OutputPath(file_okay=False, path_type=Path), default=None,
              help="Where artifacts, metadata and pushed models go (default ./pipeline_output).")
@click.option("--data", type=CorpusDirectory(), default=None,
              help="A corpus of any paper: dialog bAbI, banking (dialog-bAbI layout) or Movie Dialog; its paper's "
                   "models are trained (default ./corpora/restaurant).")
@click.option("--tasks", type=TaskList(), default="",
              help="Comma-separated tasks sharing one candidate set (default: all).")
@click.option("--beam-arg", "beam_args", multiple=True, type=BeamArg(),
              help="A Beam pipeline option, repeatable (default: in-memory DirectRunner).")
def run_pipeline(quick: bool, root: Path | None, data: Path | None, tasks: tuple[int, ...],
                 beam_args: tuple[str, ...]) -> None:
    """Run the TFX pipeline `dialog` locally on a corpus of any paper (its own models); print the slice table, then
    one JSON line (the last line)."""
    from data.atomic import one_reader, one_writer
    from pipeline.configs import DEFAULT_DATA, DEFAULT_ROOT
    from pipeline.local_runner import DEFAULT_BEAM_ARGS, run
    from pipeline.report import write_report
    from pipeline.summary import MOVIE_COLUMNS, as_json_line, format_table, run_summary

    data = data or DEFAULT_DATA
    if root is not None and Path(root).resolve() == Path(data).resolve():
        raise click.BadParameter(f"{root} is the corpus the pipeline reads; give the run a root of its own",
                                 param_hint="--root")
    paper, _ = corpus_paper(data, tasks)
    movies = paper.pipeline == papers.MOVIE
    if movies and tasks:
        raise click.BadParameter("a Movie Dialog corpus trains one joint model on all its tasks", param_hint="--tasks")
    profile = paper.profiles["quick" if quick else "full"]
    products = profile.products(tasks)
    started = time.perf_counter()
    from components.data_gate import DataGateError

    with contextlib.redirect_stdout(sys.stderr):  # training progress to stderr: stdout's last line is the JSON
        try:
            # Two runs on one root would share its metadata and artifacts; a corpus being replaced is not read.
            with one_writer(root or DEFAULT_ROOT), one_reader(data):
                located = run(root=root or DEFAULT_ROOT, data=data, profile=profile, tasks=tasks,
                              beam_args=beam_args or DEFAULT_BEAM_ARGS, paper=paper.name)
                summary = run_summary(located["metadata"], products)
                page = write_report(root or DEFAULT_ROOT, products, data=data, summary=summary)
        except DataGateError as refused:  # the gate's own report, not the orchestrator's traceback
            raise click.ClickException(str(refused)) from None
    click.echo(format_table(summary, MOVIE_COLUMNS) if movies else format_table(summary), err=True)
    click.echo(f"pipeline finished in {time.perf_counter() - started:.0f} s; artifacts in "
               f"{located['pipeline_root']}; report {page}", err=True)
    click.echo(as_json_line(summary))


@main.command()
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The run's corpus (default: the one its ExampleGen read), for attention maps of a few dev dialogs "
                   "(a Movie Dialog corpus: QA questions and questions about a recommended movie).")
def report(root: Path, data: Path | None) -> None:
    """Write ROOT/report/index.html (slice tables, training curves, attention maps, the data gate's report, TFDV's
    statistics) and a model card per model, for the newest run in ROOT (``dialog pipeline --root``)."""
    from pipeline.local_runner import paths
    from pipeline.report import write_report
    from pipeline.summary import run_corpus, trained

    metadata = paths(root)["metadata"]
    if not metadata.is_file():
        raise click.ClickException(f"{root}: no pipeline run here (no metadata/metadata.db)")
    corpus = data or run_corpus(metadata)
    if corpus is None or not Path(corpus).is_dir():
        raise click.ClickException(f"{root}: the corpus of its run ({corpus or 'not recorded'}) is not here; give "
                                   "--data")
    paper, _ = corpus_paper(Path(corpus), ())
    products = trained(metadata, paper.profiles["full"].products())
    if not products:
        raise click.ClickException(f"{root}: its newest run trained no model of {paper.title}")
    click.echo(write_report(root, products, Path(corpus)))
