"""Corpus commands: ``generate`` (restaurant, banking, movies), ``convert dstc2``, ``show``, ``stats``, ``validate``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from data.layout import SPLITS
from pipeline.cli.app import main
from pipeline.cli.infra import LARGE_CORPUS_GB, check_room, writing
from pipeline.cli.options import (
    CorpusDirectory,
    OutputPath,
    TaskList,
    corpus_out_option,
    generator_beam_args_option,
    movie_layout,
    refuse_own_input,
    runner_option,
    seed_option,
)


@main.group()
def generate() -> None:
    """Generate a corpus in the dialog-bAbI layout."""


@generate.command("restaurant")
@corpus_out_option
@seed_option
@click.option("--dialogs", default=1000, show_default=True, type=click.IntRange(min=1),
              help="Dialogs per split (trn, dev, tst, tst-OOV) and task.")
@click.option("--tasks", default="1,2,3,4,5", show_default=True, type=TaskList(range(1, 6), "restaurant tasks"),
              help="Tasks to generate, e.g. 1,3.")
@click.option("--task5-min-results", default=3, show_default=True, type=click.IntRange(1, 3),
              help="Fewest restaurants a task-5 dialog's final API call returns: 3 gives Table 1's figures (and the "
                   "public release's); 1 is the paper's text read literally (any request with a result).")
@runner_option
@generator_beam_args_option
@click.option("--yes", is_flag=True, help=f"Write a corpus estimated above {LARGE_CORPUS_GB} GB without refusing.")
def generate_restaurant(out: Path, seed: int, dialogs: int, tasks: tuple[int, ...], task5_min_results: int,
                        runner: str, beam_args: tuple[str, ...], yes: bool) -> None:
    """The restaurant-reservation simulator: tasks 1-5 with plain and OOV test sets."""
    from data.babi.generation import GenerationPlan, estimated_bytes
    from data.babi.generation import generate as run_generation

    plan = GenerationPlan(seed=seed, dialogs_per_split=dialogs, tasks=tasks, task5_min_results=task5_min_results)
    check_room(out, estimated_bytes(plan), yes)
    start = time.perf_counter()
    with writing(out):
        try:
            written = run_generation(plan, out, runner=runner, beam_args=beam_args)
        except ValueError as error:  # tasks already there whose KB this seed would replace
            raise click.ClickException(str(error)) from None
    seconds = time.perf_counter() - start
    click.echo(f"wrote {len(written)} dialog files ({plan.total_dialogs} dialogs), candidates and KB to {out} "
               f"in {seconds:.1f} s ({plan.total_dialogs / seconds:,.0f} dialogs/s)", err=True)


@generate.command("banking")
@corpus_out_option
@seed_option
@click.option("--dialogs", default=500, show_default=True, type=click.IntRange(min=1),
              help="Training dialogs per intent.")
@click.option("--dev-dialogs", default=100, show_default=True, type=click.IntRange(min=1),
              help="Development dialogs per intent, and per intent and OOP case in the development challenge "
                   "sets (dev-OOP).")
@click.option("--test-dialogs", default=200, show_default=True, type=click.IntRange(min=1),
              help="Test dialogs per intent and test case (IT and OOT; non-OOP and each OOP set), as the paper.")
@click.option("--reading", "settings", multiple=True, metavar="NAME=VALUE",
              help="Another reading of a detail the paper leaves open (repeatable): declines, reordering, "
                   "another_slot, new_api, multiple_scored (docs/banking.md says what each sets).")
@click.option("--swapped-thirds", is_flag=True,
              help="Write trn with the development third of the user templates and dev, dev-OOP with the training "
                   "third (the tests as ever): a second held-out set of wordings to choose on, never the test's.")
@click.option("--yes", is_flag=True, help=f"Write a corpus estimated above {LARGE_CORPUS_GB} GB, or above the memory "
                                          "available to generate it, without refusing.")
def generate_banking(out: Path, seed: int, dialogs: int, dev_dialogs: int, test_dialogs: int,
                     settings: tuple[str, ...], swapped_thirds: bool, yes: bool) -> None:
    """Banking self-play (Majumdar et al.): six intents, IT/OOT tests and the out-of-pattern challenge sets."""
    from data.banking.generation import MEMORY_PER_BYTE, BankingPlan, estimated_bytes
    from data.banking.generation import generate as run_generation
    from data.banking.readings import Readings

    try:
        readings = Readings.parse(settings)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--reading") from None
    plan = BankingPlan(seed, dialogs, dev_dialogs, test_dialogs, readings=readings, swapped_thirds=swapped_thirds)
    size = estimated_bytes(plan)
    check_room(out, size, yes, memory=size * MEMORY_PER_BYTE, fewer="--dialogs, --dev-dialogs or --test-dialogs")
    start = time.perf_counter()
    with writing(out):
        written = run_generation(plan, out)
    click.echo(f"wrote {', '.join(path.name for path in written)} to {out} in {time.perf_counter() - start:.1f} s",
               err=True)


@generate.command("movies")
@corpus_out_option
@seed_option
@click.option("--scale", type=click.Choice(["tiny", "small", "paper"]), default="small", show_default=True,
              help="World and task sizes (tiny: smoke tests; paper: the paper's ~75k entities and 3M training "
                   "dialogs, through Beam).")
@runner_option
@generator_beam_args_option
@click.option("--calibration", "settings", multiple=True, metavar="NAME=VALUE",
              help="A knob of the world's calibration over its default (repeatable): popularity_exponent, "
                   "ratings_per_user, ratings_spread, taste_weight, liked_share, qa_distractor, reddit_echo, "
                   "reddit_related (docs/movie.md says what each sets).")
@click.option("--yes", is_flag=True, help=f"Write a corpus estimated above {LARGE_CORPUS_GB} GB without refusing.")
def generate_movies(out: Path, seed: int, scale: str, runner: str, beam_args: tuple[str, ...],
                    settings: tuple[str, ...], yes: bool) -> None:
    """A synthetic movie world and the Movie Dialog tasks 1-4 from it, in the public Movie Dialog layout."""
    from data.movie.tasks import MoviePlan, estimated_bytes
    from data.movie.tasks import generate as run_generation
    from data.movie.world import Calibration

    try:
        calibration = Calibration.parse(settings)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--calibration") from None
    plan = MoviePlan(seed, scale, calibration)
    check_room(out, estimated_bytes(plan), yes, fewer="examples (a smaller --scale)")
    start = time.perf_counter()
    with writing(out):
        written = run_generation(plan, out, runner=runner, beam_args=beam_args)
    seconds = time.perf_counter() - start
    click.echo(f"wrote {len(written)} files ({plan.total_examples:,} examples and dialogs) to {out} in "
               f"{seconds:.1f} s ({plan.total_examples / seconds:,.0f} per second)", err=True)


@main.group()
def convert() -> None:
    """Convert public releases into the dialog-bAbI layout."""


@convert.command("dstc2")
@click.option("--src", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="DSTC2 release root (data/ with the calls, scripts/config/ with the file lists and ontology).")
@click.option("--out", required=True, type=OutputPath(file_okay=False, path_type=Path),
              help="Directory to write task 6 into (created if missing).")
@click.option("--skip-bad", is_flag=True, help="Leave out malformed calls (listed on stderr) instead of stopping.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the ratings of restaurants not offered.")
def convert_dstc2(src: Path, out: Path, skip_bad: bool, seed: int) -> None:
    """DSTC2 (log.json, label.json per call) to dialog-bAbI task 6: API calls, KB results with ratings."""
    from data.babi.dstc2 import Dstc2Error, convert_release

    refuse_own_input(out, "--out", src)
    start = time.perf_counter()
    try:
        with writing(out):
            report = convert_release(src, out, skip_bad=skip_bad, seed=seed)
    except Dstc2Error as error:
        in_a_call = Path(error.path).name in ("log.json", "label.json")  # what --skip-bad can leave out
        raise click.ClickException(str(error) + (" (use --skip-bad to leave malformed calls out)"
                                                 if in_a_call and not skip_bad else "")) from None
    for problem in report.skipped:
        click.echo(f"skipped {problem}", err=True)
    dialogs = ", ".join(f"{split} {n}" for split, n in report.dialogs.items())
    click.echo(f"wrote task 6 to {out}: {dialogs} dialogs, {report.candidates} candidates, "
               f"{report.restaurants} restaurants in the KB, {len(report.skipped)} calls skipped "
               f"in {time.perf_counter() - start:.1f} s", err=True)


@main.command()
@click.argument("directory", type=CorpusDirectory())
@click.option("--task", required=True, type=click.IntRange(min=1))
@click.option("--split", default="trn", show_default=True, type=click.Choice(SPLITS),
              help="A Movie Dialog corpus's train/dev/test are trn/dev/tst here.")
@click.option("--dialog", "first", default=0, show_default=True, type=click.IntRange(min=0),
              help="The first dialog shown, from 0.")
@click.option("--count", default=1, show_default=True, type=click.IntRange(min=1), help="How many dialogs.")
def show(directory: Path, task: int, split: str, first: int, count: int) -> None:
    """Print dialogs of a corpus as a person reads them: user, bot and API-result lines (dialog-bAbI, banking,
    DSTC2 and Movie Dialog layouts)."""
    from data.show import show as show_dialogs

    try:
        for text in show_dialogs(directory, task, split, first, count, movie=movie_layout(directory)):
            click.echo(text + "\n")
    except ValueError as error:  # FormatError included: it names the file and line
        raise click.ClickException(str(error)) from None


@main.command()
@click.argument("directory", type=CorpusDirectory())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
def stats(directory: Path, as_json: bool) -> None:
    """Table 1 of the paper for a corpus directory, beside the paper's figures."""
    from data.babi.table1 import format_table
    from data.babi_format import FormatError
    from data.stats import corpus_stats, format_movie_table, movie_directory_stats

    try:
        result = movie_directory_stats(directory) if movie_layout(directory) else corpus_stats(directory)
    except (FormatError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(result, sort_keys=False))
    else:
        click.echo(format_movie_table(result) if result.get("layout") == "movie-dialog" else format_table(result))


@main.command()
@click.argument("directory", type=CorpusDirectory())
@click.option("--partial", is_flag=True, help="Check the files present; a missing split is not a problem.")
@click.option("--strict", is_flag=True, help="Fail on warnings too (KB results the KB states otherwise, duplicate "
                                              "candidates), not only on errors.")
@click.option("--max-per-file", default=10, show_default=True, type=click.IntRange(min=0),
              help="Errors to list per file.")
def validate(directory: Path, partial: bool, strict: bool, max_per_file: int) -> None:
    """Check a corpus directory: exit 1 with a report naming file and line when it has errors (or, with --strict,
    warnings); warnings are counted by file and kind."""
    from data.validate import validate_corpus, validate_movie_directory

    report = (validate_movie_directory if movie_layout(directory) else validate_corpus)(directory, partial=partial)
    click.echo(report.format(max_per_file=max_per_file, strict=strict))
    if not report.passes(strict):
        sys.exit(1)
