"""The ``dialog`` command line: generate, convert, check and describe corpora; train, evaluate, explain and chat
with models; the paper tables; the TFX pipeline.

Subcommands import what they need when they run, so that ``dialog validate`` does not pay for TensorFlow.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from data.layout import SPLITS

# TFX's progress lines, kept when the frameworks' other logs are hidden.
PROGRESS = re.compile(r"^Component \S+ is (running|finished)\.$")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (a test runner swaps it), TFX's progress and errors only."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.addFilter(_progress_or_error)
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _progress_or_error(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR or bool(PROGRESS.match(record.getMessage()))


def quiet_frameworks() -> None:
    """Keep the frameworks' noise out of the user's way, in one place: TensorFlow's C++ lines (CUDA, cuDNN,
    TensorRT, oneDNN: set before TensorFlow is imported, which subcommands do lazily), Python's deprecation and
    future warnings, and the logs of TFX and Beam below ERROR, except one line per component started and
    finished. ``dialog --verbose`` shows them all."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
    from absl import logging as absl_logging

    absl_logging.set_verbosity(absl_logging.INFO)  # TFX's progress lines are INFO; the handler below filters
    root = logging.getLogger()
    if not any(isinstance(handler, _StderrHandler) for handler in root.handlers):
        root.addHandler(_StderrHandler())  # the root has a handler now, so the frameworks' basicConfig adds none


_OP_NOISE = re.compile(r"\{\{function_node [^}]*\}\}|\s*\[Op:\w+\]$")


def file_system_error(error: BaseException) -> str | None:
    """One line for a full disk, a read-only or unwritable path, a missing directory: Python's ``OSError`` or
    TensorFlow's file-system errors (an ``OpError`` from its C++ writers, e.g. at a model's export); None for any
    other error, which keeps its traceback."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:  # the cause a framework wrapped it in
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno is None and type(error) is not OSError:
            return str(error)  # ours, with its own message (data.atomic.DirectoryBusy)
        if isinstance(error, OSError) and error.errno is not None:
            return f"{error.filename or ''}{': ' if error.filename else ''}{error.strerror}"
        if any(kind.__name__ == "OpError" for kind in type(error).__mro__) and any(
                word in str(error).lower() for word in ("no space left", "read-only file system", "permission denied",
                                                        "disk quota")):
            line = str(getattr(error, "message", error)).strip().splitlines()[0]
            return _OP_NOISE.sub("", line).strip()  # the op's internal names around the path and the reason
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return None


def keras_verbosity() -> int:
    """Keras' ``verbose`` for training a command runs: its progress bar on a terminal, one line per epoch in a log,
    nothing with ``dialog --quiet``."""
    from data.progress import is_quiet, shown

    return 0 if is_quiet() else 1 if shown() else 2


class DialogGroup(click.Group):
    """The ``dialog`` command group: a file-system error in any command (a full disk at a model's export, say)
    is one line, not a traceback of the frameworks underneath."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as error:  # noqa: BLE001 (re-raised unless it is a file-system error)
            line = file_system_error(error)
            if line is None:
                raise
            raise click.ClickException(line) from None


@click.group(cls=DialogGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--verbose", is_flag=True, help="Show TensorFlow's, TFX's and Beam's own logs and warnings.")
@click.option("--quiet", is_flag=True,
              help="No progress bars and no epoch lines (bars are drawn only when stderr is a terminal anyway).")
def main(verbose: bool, quiet: bool) -> None:
    """End-to-end goal-oriented dialog (dialog-bAbI and friends) on TFX."""
    from data.progress import set_quiet

    set_quiet(quiet)
    # Google client libraries warn on import that Python 3.11 support ends in 2027: noise for every command.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\.")
    if not verbose:
        quiet_frameworks()


@main.group()
def generate() -> None:
    """Generate a corpus in the dialog-bAbI layout."""


class TaskList(click.ParamType):
    """Task numbers separated by commas (``1,3``), each once, in order; ``allowed`` bounds them. Every ``--tasks``
    option reads its value through this one type."""

    name = "tasks"

    def __init__(self, allowed: range | None = None, what: str = "tasks") -> None:
        self.allowed, self.what = allowed, what

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, ...]:
        from data.layout import parse_tasks

        if isinstance(value, tuple):
            return value
        try:
            tasks = parse_tasks(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)
        if self.allowed is not None and not (tasks and set(tasks) <= set(self.allowed)):
            self.fail(f"{self.what} are {self.allowed.start}-{self.allowed.stop - 1}, got {value!r}", param, ctx)
        return tasks


class OutputPath(click.Path):
    """A path a command will write (a file or a directory, created with its parents): refused at once when one of
    its parents is a file, which would otherwise fail deep inside the work with a traceback. A URL (gs://) is
    taken as given."""

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> object:
        converted = super().convert(value, param, ctx)
        text = os.fspath(converted) if isinstance(converted, os.PathLike | str) else str(converted)
        if "://" not in text:
            for parent in Path(text).absolute().parents:
                if parent.exists():
                    if not parent.is_dir():
                        self.fail(f"{text}: {parent} is a file, not a directory", param, ctx)
                    break
        return converted


class CorpusDirectory(click.Path):
    """An existing corpus directory a command reads: held under a shared lock (``data.atomic.one_reader``) until
    the command ends, so it never reads a corpus that ``generate`` or ``convert`` is replacing meanwhile."""

    def __init__(self) -> None:
        super().__init__(exists=True, file_okay=False, path_type=Path)

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> object:
        from data.atomic import DirectoryBusy, one_reader

        converted = super().convert(value, param, ctx)
        if ctx is not None:
            try:
                ctx.with_resource(one_reader(converted))
            except DirectoryBusy as busy:
                self.fail(str(busy), param, ctx)
        return converted


def refuse_own_input(output: Path | None, option: str, *inputs: Path | None) -> None:
    """Refuse an output that is one of the command's inputs: a directory it reads, a directory holding one (a
    replaced output is renamed aside and deleted), or a file already inside one (``evaluate --report`` naming the
    split it evaluates would write over the corpus). A new file beside the corpus is fine."""
    if output is None:
        return
    target = Path(output).resolve()
    for given in filter(None, inputs):
        source = Path(given).resolve()
        inside = source in target.parents and (os.path.isfile(output) or os.path.islink(output))
        if target == source or target in source.parents or inside:
            what = "is" if target == source else "holds" if target in source.parents else "is a file inside"
            raise click.BadParameter(f"{output} {what} {given}, which this command reads; write elsewhere",
                                     param_hint=option)


# Every split a corpus can have; one the corpus lacks is one line naming the missing file.
split_option = click.option("--split", default="tst", show_default=True, type=click.Choice(SPLITS),
                            help="tst-OOV: dialog-bAbI's out-of-vocabulary tests; tst-OOT: banking's "
                                 "out-of-template tests.")
corpus_out_option = click.option("--out", "out", required=True, type=OutputPath(file_okay=False, path_type=Path),
                                 help="Directory to write the corpus into (created if missing).")
seed_option = click.option("--seed", default=0, show_default=True, type=int,
                           help="Seed: the same seed gives the same corpus.")
runner_option = click.option("--runner", type=click.Choice(["auto", "local", "beam"]), default="auto",
                             show_default=True,
                             help="local: this process; beam: an Apache Beam pipeline; auto: Beam for large corpora.")
class BeamArg(click.ParamType):
    """One Beam pipeline option, ``--name=value``: anything else Beam would drop with a log line, and an unknown
    ``--runner`` failed after the work had started, with a traceback."""

    name = "beam option"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text.startswith("--") or len(text) < 3:
            self.fail(f"{text!r} is not a Beam option: give --name=value (e.g. --runner=DataflowRunner)", param, ctx)
        name, _, runner = text.partition("=")
        if name == "--runner" and runner:
            from apache_beam.runners.runner import create_runner

            try:
                create_runner(runner)
            except ValueError as error:
                self.fail(str(error).split(". Valid values")[0] + " (e.g. DirectRunner, DataflowRunner, FlinkRunner, "
                          "SparkRunner, PortableRunner)", param, ctx)
        return text


generator_beam_args_option = click.option(
    "--beam-arg", "beam_args", multiple=True, type=BeamArg(),
    help="A Beam pipeline option, repeatable (default: DirectRunner, one worker process per core).")


@contextlib.contextmanager
def _writing(out: Path) -> Iterator[None]:
    """A directory another process is writing, a full disk or an unwritable path: one line naming it. Files of a
    corpus already in ``out`` that the command wrote over are said (those whose content changed by name: another
    seed or size), so a corpus is never replaced in silence."""
    from data.atomic import recording_replacements

    try:
        with recording_replacements() as replaced:
            yield
    except OSError as error:
        where = error.filename or out
        raise click.ClickException(str(error) if error.errno is None else f"{where}: {error.strerror}") from None
    changed = [Path(path).relative_to(out).as_posix() for path, differs in replaced if differs]
    if changed:
        shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
        click.echo(f"replaced {len(changed)} files of the corpus already in {out} with different content (another "
                   f"seed or size): {shown}", err=True)
    if len(replaced) > len(changed):
        unchanged = len(replaced) - len(changed)
        click.echo(f"{unchanged} file{'s' * (unchanged != 1)} already in {out} written again unchanged", err=True)


# A corpus estimated above this many GB is written only when asked (--yes): a mistyped --dialogs would otherwise
# fill the disk before anything said so.
LARGE_CORPUS_GB = 5


def _available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux's MemAvailable), None where unknown."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/meminfo") as meminfo:
            return int(next(line for line in meminfo if line.startswith("MemAvailable:")).split()[1]) * 1024
    return None


def _check_room(out: Path, size: int, yes: bool, memory: int | None = None, fewer: str = "--dialogs or --tasks"
                ) -> None:
    """Refuse a corpus of about ``size`` bytes that the disk under ``out`` cannot hold, or a large one not asked
    for, or one whose generation needs about ``memory`` bytes more than the machine has available (unless asked
    for: the figure is an estimate); each named with the estimate, before anything is written."""
    import shutil

    existing = next(p for p in (out.absolute(), *out.absolute().parents) if p.exists())
    free = shutil.disk_usage(existing).free
    gigabytes = size / 1e9
    if size > free:
        raise click.ClickException(f"the corpus would take about {gigabytes:,.1f} GB and {existing} has "
                                   f"{free / 1e9:,.1f} GB free; ask for fewer {fewer}")
    if gigabytes > LARGE_CORPUS_GB and not yes:
        raise click.ClickException(f"the corpus would take about {gigabytes:,.1f} GB (more than {LARGE_CORPUS_GB} GB); "
                                   "pass --yes to write it")
    available = _available_memory()
    if memory is not None and available is not None and memory > available and not yes:
        raise click.ClickException(f"the corpus ({gigabytes:,.1f} GB) would need about {memory / 1e9:,.1f} GB of "
                                   f"memory to generate and {available / 1e9:,.1f} GB is available; ask for fewer "
                                   f"{fewer}, or pass --yes to try")


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
    _check_room(out, estimated_bytes(plan), yes)
    start = time.perf_counter()
    with _writing(out):
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
              help="Development dialogs per intent.")
@click.option("--test-dialogs", default=200, show_default=True, type=click.IntRange(min=1),
              help="Test dialogs per intent and test case (IT and OOT; non-OOP and each OOP set), as the paper.")
@click.option("--yes", is_flag=True, help=f"Write a corpus estimated above {LARGE_CORPUS_GB} GB, or above the memory "
                                          "available to generate it, without refusing.")
def generate_banking(out: Path, seed: int, dialogs: int, dev_dialogs: int, test_dialogs: int, yes: bool) -> None:
    """Banking self-play (Majumdar et al.): six intents, IT/OOT tests and the out-of-pattern challenge sets."""
    from data.banking.generation import MEMORY_PER_BYTE, BankingPlan, estimated_bytes
    from data.banking.generation import generate as run_generation

    plan = BankingPlan(seed, dialogs, dev_dialogs, test_dialogs)
    size = estimated_bytes(plan)
    _check_room(out, size, yes, memory=size * MEMORY_PER_BYTE, fewer="--dialogs, --dev-dialogs or --test-dialogs")
    start = time.perf_counter()
    with _writing(out):
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
@click.option("--yes", is_flag=True, help=f"Write a corpus estimated above {LARGE_CORPUS_GB} GB without refusing.")
def generate_movies(out: Path, seed: int, scale: str, runner: str, beam_args: tuple[str, ...], yes: bool) -> None:
    """A synthetic movie world and the Movie Dialog tasks 1-4 from it, in the public Movie Dialog layout."""
    from data.movie.tasks import MoviePlan, estimated_bytes
    from data.movie.tasks import generate as run_generation

    plan = MoviePlan(seed, scale)
    _check_room(out, estimated_bytes(plan), yes, fewer="examples (a smaller --scale)")
    start = time.perf_counter()
    with _writing(out):
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
        with _writing(out):
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
        for text in show_dialogs(directory, task, split, first, count):
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
    from data.stats import corpus_stats, format_movie_table

    try:
        result = corpus_stats(directory)
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
    from data.validate import validate_corpus

    report = validate_corpus(directory, partial=partial)
    click.echo(report.format(max_per_file=max_per_file, strict=strict))
    if not report.passes(strict):
        sys.exit(1)


def _check_tasks(data: Path, tasks: tuple[int, ...], need_corpus: bool = False) -> None:
    """A task asked for that the corpus does not hold is a usage error before any work (the tables and the pipeline
    would write nothing, or fail deep inside a run); so is a directory with no dialog-bAbI task when one is
    needed."""
    from data.layout import discover

    if not data.is_dir():
        raise click.BadParameter(f"{data} is not a directory (make run generates the default corpus)",
                                 param_hint="--data")
    try:
        present = discover(data)
    except ValueError as error:  # a file name that looks like a corpus file but is not one
        raise click.BadParameter(str(error), param_hint="--data") from None
    if need_corpus and not present:
        raise click.BadParameter(f"{data} holds no task in the dialog-bAbI layout", param_hint="--data")
    missing = sorted(set(tasks) - set(present)) if present else []
    if missing:
        raise click.BadParameter(f"{data} has no files of task {', '.join(map(str, missing))} (found tasks "
                                 f"{', '.join(map(str, sorted(present)))})", param_hint="--tasks")


def _task_files(data: Path, task: int):
    from data.layout import discover

    tasks = discover(data)
    if task not in tasks:
        raise click.ClickException(f"{data}: no files of task {task} (found tasks {sorted(tasks) or 'none'})")
    return tasks[task]


@main.command()
@click.option("--data", required=True, type=CorpusDirectory(),
              help="Corpus directory in the dialog-bAbI layout.")
@click.option("--task", required=True, type=int, help="Task number (1-6).")
@click.option("--model", "model_kind", type=click.Choice(["memn2n", "embeddings", "template", "hcn"]),
              default="memn2n", show_default=True,
              help="MemN2N (appendix A), supervised embeddings (4.3), the template ranker (a MemN2N over "
                   "delexicalised answers and a learned filler, one SavedModel), or Hybrid Code Networks (the "
                   "template ranker with an LSTM over the utterances, three seeds averaged, and its action mask: "
                   "task 6's product model).")
@click.option("--match-type/--no-match-type", default=False, show_default=True, help="Match-type features (4.5).")
@click.option("--preset", type=click.Choice(["paper", "none"]), default="paper", show_default=True,
              help="paper: Table 9 (MemN2N) or Table 8 (embeddings) settings for the task.")
@click.option("--history/--no-history", "use_history", default=None,
              help="Embeddings: the whole history as input, or the last utterance (overrides the preset).")
@click.option("--shared-embeddings", is_flag=True, help="Embeddings: A = B.")
@click.option("--hops", type=click.IntRange(1, 4), help="Memory hops (overrides the preset).")
@click.option("--embedding-dim", type=int, help="Embedding size (overrides the preset).")
@click.option("--learning-rate", type=float, help="Adam learning rate (overrides the preset).")
@click.option("--only-learned-words", is_flag=True,
              help="MemN2N: words no training dialog holds (OOV entities) keep a zero embedding.")
@click.option("--per-occurrence-gradient", is_flag=True,
              help="MemN2N: a gradient row per word occurrence, as a Keras Embedding layer gives it, so Adam steps "
                   "words said often in a batch further (Table 2's MemN2N rows; slower).")
@click.option("--select-on-oov-dev", is_flag=True,
              help="Choose the epoch on the mean of dev and an OOV dev made from it (its KB entities swapped for "
                   "ones no training dialog holds), not on dev alone.")
@click.option("--epochs", type=click.IntRange(min=1), help="At most this many epochs (default: the shared one).")
@click.option("--batch-size", type=click.IntRange(min=1), help="Examples per step (default: the shared one).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--per-epoch", "with_history", is_flag=True,
              help="Add each epoch's loss, dev accuracy, training and dev evaluation seconds to the JSON.")
@click.option("--out", required=True, type=OutputPath(file_okay=False),
              help="SavedModel directory, local or remote (gs://...): a new one, an empty one, or a model dialog "
                   "train wrote before, holding nothing else (replaced whole once the new one is written). Anything "
                   "else, a report written into a model directory included, is refused before training, never "
                   "replaced.")
@click.option("--log-dir", type=OutputPath(file_okay=False), help="TensorBoard log directory.")
def train(data: Path, task: int, model_kind: str, match_type: bool, preset: str, use_history: bool | None,
          shared_embeddings: bool, hops: int | None, embedding_dim: int | None, learning_rate: float | None,
          only_learned_words: bool, per_occurrence_gradient: bool, select_on_oov_dev: bool, epochs: int | None,
          batch_size: int | None, seed: int, with_history: bool, out: str, log_dir: str | None) -> None:
    """Train on trn, keep the best epoch on dev, write a self-contained SavedModel. Prints a JSON summary."""
    from data.atomic import one_writer_of
    from data.babi_format import FormatError
    from models import methods
    from models.babi.methods import MODEL_METHODS
    from models.babi.presets import HCN_PRODUCT, paper_config
    from models.examples import TaskData
    from models.serving.export import prepare_output
    from models.training import train_config

    overrides = {key: value for key, value in (("hops", hops), ("embedding_dim", embedding_dim),
                                               ("learning_rate", learning_rate), ("use_history", use_history),
                                               ("epochs", epochs), ("batch_size", batch_size))
                 if value is not None}
    # A flag of another model (--hops of the embeddings) is refused by name, so only the flags given are passed.
    flags = {name: True for name, given in (("shared_embeddings", shared_embeddings),
                                            ("only_learned_words", only_learned_words),
                                            ("per_occurrence_gradient", per_occurrence_gradient)) if given}
    common = {"match_type": match_type, "seed": seed, "select_on_oov_dev": select_on_oov_dev, **flags, **overrides}
    refuse_own_input(out, "--out", data)
    refuse_own_input(log_dir, "--log-dir", data)
    if model_kind == "hcn":  # the template ranker's config and method, as the pipeline trains task 6's model
        model_kind, common = "template", {**HCN_PRODUCT, **common}
    try:  # a setting that cannot train, or an --out that is not ours, is refused before any training
        config = (paper_config(task, model=model_kind, **common) if preset == "paper"
                  else train_config(model_kind, **common))
        # One writer of --out (a second would clear this one's staging); Keras' epoch lines to stderr: stdout is
        # the JSON alone.
        with one_writer_of(out), contextlib.redirect_stdout(sys.stderr):
            prepare_output(out)  # before reading the corpus: a refused --out costs nothing
            loaded = TaskData.load(_task_files(data, task), splits=("trn", "dev"))
            fitted = methods.get(MODEL_METHODS[model_kind], "babi").fit(
                loaded, out, methods.Settings(config=config, verbose=keras_verbosity(), log_dir=log_dir))
    except (FormatError, FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    summary = {"task": task, **fitted.summary}
    if not with_history:
        summary = {key: value for key, value in summary.items() if key != "history"}
        if "template_model" in summary:
            summary["template_model"] = {k: v for k, v in summary["template_model"].items() if k != "history"}
    click.echo(json.dumps(summary, allow_nan=False))


@main.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", required=True, type=CorpusDirectory())
@click.option("--task", required=True, type=int)
@split_option
@click.option("--report", type=OutputPath(dir_okay=False, path_type=Path), help="Write the mistakes as JSON lines.")
def evaluate(model_dir: Path, data: Path, task: int, split: str, report: Path | None) -> None:
    """Per-response and per-dialog accuracy of a model on a split, as one JSON line."""
    from models.examples import split_examples
    from models.serving.evaluate import answers_outside
    from models.serving.evaluate import evaluate as run_evaluation
    from models.serving.ranker import SavedModelRanker

    refuse_own_input(report, "--report", data, model_dir)
    try:
        examples = split_examples(_task_files(data, task), split)
        ranker = SavedModelRanker(model_dir)
        result = run_evaluation(ranker, examples, report)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    outside, candidates = answers_outside(ranker.directory, examples)
    if outside:
        click.echo(f"warning: {outside:,} of {len(examples):,} gold answers are not among the model's {candidates:,} "
                   "candidates (a model of another corpus?): those turns cannot be answered right", err=True)
    click.echo(json.dumps({**result, "answers_outside_candidates": outside}))


@main.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", required=True, type=CorpusDirectory())
@click.option("--task", required=True, type=int)
@click.option("--dialog", "dialog_index", required=True, type=click.IntRange(min=0),
              help="Dialog number in the split, from 0 (its id is babi-N/split/K).")
@split_option
@click.option("--png", type=OutputPath(dir_okay=False, path_type=Path), help="Write a heat map of one turn.")
@click.option("--turn", type=click.IntRange(min=0),
              help="Bot turn for the heat map (default: the dialog's last); needs --png.")
def explain(model_dir: Path, data: Path, task: int, dialog_index: int, split: str, png: Path | None,
            turn: int | None) -> None:
    """Per-hop attention over the memories for each bot turn of a dialog (Tables 3-6 of the paper)."""
    if turn is not None and png is None:
        raise click.BadParameter("--turn picks the turn of the heat map: give --png too", param_hint="--turn")
    from models.examples import DialogId, split_examples
    from models.serving.explain import explain_turns, format_turn, write_heat_map
    from models.serving.ranker import SavedModelRanker

    refuse_own_input(png, "--png", data, model_dir)
    try:
        examples = split_examples(_task_files(data, task), split)
        ranker = SavedModelRanker(model_dir)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    wanted = [e for e in examples if DialogId.parse(e.dialog_id).index == dialog_index]
    if not wanted:
        raise click.ClickException(f"task {task} {split} has no dialog {dialog_index}")
    turns = explain_turns(ranker, wanted)
    click.echo("\n\n".join(format_turn(t) for t in turns))
    if png is not None:
        chosen = turns[-1] if turn is None else next((t for t in turns if t.example.turn == turn), None)
        if chosen is None:
            raise click.ClickException(f"dialog {dialog_index} has no bot turn {turn} (0-{len(turns) - 1})")
        write_heat_map(chosen, png)
        click.echo(f"wrote {png}", err=True)


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
    _check_tasks(data, tasks)
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
        _check_tasks(data or DEFAULT_DATA, tasks, need_corpus=True)
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


@main.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A SavedModel, or a pushed model's base directory (its newest version is used).")
@click.option("--kb", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="KB file for API calls (default: corpora/restaurant/dialog-babi-kb-all.txt when present).")
def chat(model_dir: Path, kb: Path | None) -> None:
    """Talk to a model in the terminal; API calls are answered from the KB. An empty line is <SILENCE>;
    end with Ctrl-D."""
    from data.babi_format import FormatError, read_kb
    from data.layout import SHARED_KB
    from pipeline.configs import DEFAULT_DATA

    kb = kb or (DEFAULT_DATA / SHARED_KB if (DEFAULT_DATA / SHARED_KB).is_file() else None)
    try:
        facts = read_kb(kb).facts if kb else []
    except FormatError as error:
        raise click.ClickException(str(error)) from None
    from models.serving.chat import ChatSession

    try:
        session = ChatSession(model_dir, facts)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"model {session.model_dir}; KB {kb or 'none (API calls are not answered)'}", err=True)
    with contextlib.suppress(AttributeError, ValueError):  # undecodable bytes reach respond(), which refuses them
        sys.stdin.reconfigure(errors="surrogateescape")
    while True:
        try:
            user = input("you> ")
        except EOFError:
            click.echo("", err=True)
            return
        except UnicodeDecodeError:
            click.echo("that line is not valid UTF-8; the conversation is kept", err=True)
            continue
        try:
            produced = session.respond(user)
        except ValueError as error:
            click.echo(str(error), err=True)
            continue
        for speaker, line in produced:
            click.echo(f"{speaker + '>':<5}{line}")


if __name__ == "__main__":
    main()
