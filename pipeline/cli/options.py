"""Option and argument types the commands share, and the checks of what they name: task lists, outputs (never
one of the command's own inputs), corpus directories (read under a shared lock), Beam options, the tasks a corpus
holds."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from data.layout import SPLITS

if TYPE_CHECKING:
    from models.papers import Paper

T = TypeVar("T")


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


def corpus_papers(data: Path, tasks: tuple[int, ...] = ()) -> list[tuple[Paper, tuple[int, ...]]]:
    """The papers of a corpus (``models.papers``), each with its tasks among those asked for (default: all): the
    one lookup of the tables. A task the corpus lacks, or a directory of no paper's layout, is a usage error
    before any work."""
    from models import papers

    return _looked_up(papers.held, data, tasks)


def corpus_paper(data: Path, tasks: tuple[int, ...] = (), option: str = "--tasks") -> tuple[Paper, tuple[int, ...]]:
    """The one paper of a corpus' tasks (those asked for; default all), and those tasks: the one lookup of
    ``train``, ``pipeline`` and ``report``. Tasks of several papers are a usage error naming them; ``option`` is
    the command's option that named the tasks."""
    from models import papers

    return _looked_up(papers.of_corpus, data, tasks, option)


def movie_layout(directory: Path) -> bool:
    """Whether the papers of a corpus (``models.papers``) read it in the Movie Dialog layout, not as dialog-bAbI
    files: how ``validate``, ``stats`` and ``show`` read it. A file name that looks like a corpus file but is not
    one is left to the dialog-bAbI reader, which names it."""
    from models import papers

    registered()
    try:
        return any(paper.pipeline == papers.MOVIE for paper, _ in papers.present(directory))
    except ValueError:
        return False


def registered() -> dict[str, Paper]:
    """Every paper (``models.papers.papers``); a paper module ``DIALOG_PAPERS`` names that cannot be imported is one
    line naming it (exit 1), before any corpus is looked at."""
    from models import papers

    try:
        return papers.papers()
    except ValueError as error:
        raise click.ClickException(str(error)) from None


def _looked_up(lookup: Callable[..., T], data: Path, tasks: tuple[int, ...], option: str = "--tasks") -> T:
    registered()
    if not data.is_dir():
        raise click.BadParameter(f"{data} is not a directory (make run generates the default corpus)",
                                 param_hint="--data")
    try:
        return lookup(data, tasks)
    except FileNotFoundError as error:
        raise click.BadParameter(str(error), param_hint="--data") from None
    except ValueError as error:  # a task it lacks, tasks of several papers, a misnamed corpus file
        raise click.BadParameter(str(error), param_hint=option if tasks else "--data") from None


def task_files(data: Path, task: int):
    from data.layout import discover

    tasks = discover(data)
    if task not in tasks:
        raise click.ClickException(f"{data}: no files of task {task} (found tasks {sorted(tasks) or 'none'})")
    return tasks[task]
