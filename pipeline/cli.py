"""The ``dialog`` command line: generate, check and describe corpora (and, later, train and run the pipeline).

Subcommands import what they need when they run, so that ``dialog validate`` does not pay for TensorFlow.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """End-to-end goal-oriented dialog (dialog-bAbI and friends) on TFX."""


@main.group()
def generate() -> None:
    """Generate a corpus in the dialog-bAbI layout."""


def _parse_tasks(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        tasks = tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError:
        raise click.BadParameter(f"expected task numbers separated by commas, got {value!r}") from None
    if not tasks or not set(tasks) <= {1, 2, 3, 4, 5}:
        raise click.BadParameter(f"restaurant tasks are 1-5, got {value!r}")
    return tasks


@generate.command("restaurant")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write the corpus into (created if missing).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed: the same seed gives the same corpus.")
@click.option("--dialogs", default=1000, show_default=True, type=click.IntRange(min=1),
              help="Dialogs per split (trn, dev, tst, tst-OOV) and task.")
@click.option("--tasks", default="1,2,3,4,5", show_default=True, callback=_parse_tasks,
              help="Tasks to generate, e.g. 1,3.")
@click.option("--runner", type=click.Choice(["auto", "local", "beam"]), default="auto", show_default=True,
              help="local: this process; beam: an Apache Beam pipeline; auto: Beam for large corpora.")
@click.option("--beam-arg", "beam_args", multiple=True,
              help="A Beam pipeline option, repeatable, e.g. --beam-arg=--direct_num_workers=2.")
def generate_restaurant(out: Path, seed: int, dialogs: int, tasks: tuple[int, ...], runner: str,
                        beam_args: tuple[str, ...]) -> None:
    """The restaurant-reservation simulator: tasks 1-5 with plain and OOV test sets."""
    from data.restaurant_corpus import GenerationPlan
    from data.restaurant_corpus import generate as run_generation

    plan = GenerationPlan(seed=seed, dialogs_per_split=dialogs, tasks=tasks)
    start = time.perf_counter()
    written = run_generation(plan, out, runner=runner, beam_args=beam_args)
    seconds = time.perf_counter() - start
    click.echo(f"wrote {len(written)} dialog files ({plan.total_dialogs} dialogs), candidates and KB to {out} "
               f"in {seconds:.1f} s ({plan.total_dialogs / seconds:,.0f} dialogs/s)", err=True)


@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
def stats(directory: Path, as_json: bool) -> None:
    """Table 1 of the paper for a corpus directory, beside the paper's figures."""
    from data.babi_format import FormatError
    from data.stats import corpus_stats, format_table

    try:
        result = corpus_stats(directory)
    except (FormatError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(json.dumps(result, sort_keys=False) if as_json else format_table(result))


@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--partial", is_flag=True, help="Check the files present; a missing split is not a problem.")
@click.option("--max-per-file", default=10, show_default=True, help="Problems to list per file.")
def validate(directory: Path, partial: bool, max_per_file: int) -> None:
    """Check a corpus directory; exit 1 with a report when anything is wrong."""
    from data.validate import validate_corpus

    report = validate_corpus(directory, partial=partial)
    click.echo(report.format(max_per_file=max_per_file))
    if not report.ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
