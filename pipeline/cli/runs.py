"""The TFX pipeline's commands: ``pipeline`` runs it locally, ``report`` writes a run's HTML page."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import click

from pipeline.cli.app import main
from pipeline.cli.options import BeamArg, CorpusDirectory, OutputPath, TaskList, check_tasks


@main.command("pipeline")
@click.option("--quick", is_flag=True,
              help="The quick profile (few epochs; the template ranker and MemN2N); default: full (every model).")
@click.option("--root", type=OutputPath(file_okay=False, path_type=Path), default=None,
              help="Where artifacts, metadata and pushed models go (default ./pipeline_output).")
@click.option("--data", type=CorpusDirectory(), default=None,
              help="Corpus directory in the dialog-bAbI layout, or a Movie Dialog corpus (default "
                   "./corpora/restaurant).")
@click.option("--tasks", type=TaskList(), default="",
              help="Comma-separated tasks sharing one candidate set (default: all).")
@click.option("--beam-arg", "beam_args", multiple=True, type=BeamArg(),
              help="A Beam pipeline option, repeatable (default: in-memory DirectRunner).")
def run_pipeline(quick: bool, root: Path | None, data: Path | None, tasks: tuple[int, ...],
                 beam_args: tuple[str, ...]) -> None:
    """Run the TFX pipeline `dialog` locally; print the slice table, then one JSON line (the last line)."""
    from data.atomic import one_reader, one_writer
    from data.movie.reader import is_movie_corpus
    from pipeline.configs import DEFAULT_DATA, DEFAULT_ROOT, MOVIE_PROFILES, PROFILES
    from pipeline.local_runner import DEFAULT_BEAM_ARGS, run
    from pipeline.report import write_report
    from pipeline.summary import MOVIE_COLUMNS, as_json_line, format_table, run_summary

    if root is not None and Path(root).resolve() == Path(data or DEFAULT_DATA).resolve():
        raise click.BadParameter(f"{root} is the corpus the pipeline reads; give the run a root of its own",
                                 param_hint="--root")
    movies = is_movie_corpus(str(data or DEFAULT_DATA))
    if movies and tasks:
        raise click.BadParameter("a Movie Dialog corpus trains one joint model on all its tasks", param_hint="--tasks")
    if not movies:
        check_tasks(data or DEFAULT_DATA, tasks, need_corpus=True)
    started = time.perf_counter()
    from components.data_gate import DataGateError

    with contextlib.redirect_stdout(sys.stderr):  # training progress to stderr: stdout's last line is the JSON
        profile = PROFILES["quick" if quick else "full"]
        try:
            # Two runs on one root would share its metadata and artifacts; a corpus being replaced is not read.
            with one_writer(root or DEFAULT_ROOT), one_reader(data or DEFAULT_DATA):
                located = run(root=root or DEFAULT_ROOT, data=data or DEFAULT_DATA, profile=profile, tasks=tasks,
                              beam_args=beam_args or DEFAULT_BEAM_ARGS)
                summary = run_summary(located["metadata"],
                                      MOVIE_PROFILES[profile.name].models if movies else profile.models)
                page = write_report(root or DEFAULT_ROOT, data=None if movies else data or DEFAULT_DATA,
                                    summary=summary)
        except DataGateError as refused:  # the gate's own report, not the orchestrator's traceback
            raise click.ClickException(str(refused)) from None
    click.echo(format_table(summary, MOVIE_COLUMNS) if movies else format_table(summary), err=True)
    click.echo(f"pipeline finished in {time.perf_counter() - started:.0f} s; artifacts in "
               f"{located['pipeline_root']}; report {page}", err=True)
    click.echo(as_json_line(summary))


@main.command()
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The run's dialog-bAbI corpus, for attention maps of a few dev dialogs (none without it).")
@click.option("--movie", is_flag=True, help="The root of a Movie Dialog run.")
def report(root: Path, data: Path | None, movie: bool) -> None:
    """Write ROOT/report/index.html (slice tables, training curves, attention maps, the data gate's report, TFDV's
    statistics) and a model card per model, for the newest run in ROOT (``dialog pipeline --root``)."""
    from pipeline.configs import MODELS, MOVIE_PROFILES
    from pipeline.local_runner import paths
    from pipeline.report import write_report

    if not paths(root)["metadata"].is_file():
        raise click.ClickException(f"{root}: no pipeline run here (no metadata/metadata.db)")
    click.echo(write_report(root, MOVIE_PROFILES["full"].models if movie else MODELS, data))
