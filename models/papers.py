"""The papers this project reproduces, each a plug-in, and the one lookup that says which paper a corpus is.

A paper is a package (``models/<paper>/``, with its data under ``data/<paper>/``) that registers one :class:`Paper`
when its ``plugin`` module is imported. The command line, the pipeline, the Kubeflow runner, the tables and the
report ask :func:`of_corpus` (or :func:`held`, for a corpus holding tasks of several papers) once and then ask
the paper: which tasks are its own, what its methods train with, which tables it writes, which models the pipeline
trains, evaluates and pushes for it. Nothing outside this module tests which paper a corpus is.

The core names no paper: the built-in ones are named here by module, in lookup order; a paper kept elsewhere (a
fourth one, a private corpus) is named by module in the ``DIALOG_PAPERS`` environment variable (comma-separated),
so it plugs in with no edit here. No TensorFlow: the command line asks this before any model is built.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# Lookup order: the first paper that claims a task of a corpus wins it (Movie Dialog's layout is its own; banking
# is task 7 of the dialog-bAbI layout, bAbI tasks 1-6).
BUILT_IN = ("models.movie.plugin", "models.banking.plugin", "models.babi.plugin")
PAPERS_VARIABLE = "DIALOG_PAPERS"
# What a paper's corpus becomes in the pipeline: "turns" (dialog-bAbI text, one tf.Example per bot turn, the
# DialogExampleGen and DialogTrainer) or "movie" (the Movie Dialog layout, the MovieExampleGen and MovieTrainer).
TURNS, MOVIE = "turns", "movie"
# The `dialog benchmark` flags a paper may honour; one it does not is refused by name.
TABLE_FLAGS = ("seeds", "folds", "streamed", "records", "jobs")


@dataclass(frozen=True)
class Product:
    """One model the pipeline trains, evaluates and pushes for a paper's corpus."""

    slot: str  # its folder under the serving directory and its name in the run summary ("template", "smn")
    component: str  # the prefix of its components' ids ("Template" -> TemplateTrainer, TemplateEvaluator)
    method: str  # the registered method (models.methods) its Trainer fits
    config: Any  # what that method trains with (a dataclass of the method's own config type)
    min_accuracy: float  # the dev per-response accuracy (a fraction) it needs to be blessed
    splits: tuple[str, ...] = ("eval", "test")  # the TFX splits its Evaluator reads ("eval" blesses)


class Profile(Protocol):
    """How hard a paper's pipeline works (``quick``, ``full``): the models it trains for the tasks asked for, the
    product model first, and how far a model may fall below the last blessed one of its kind."""

    name: str
    max_drop: float

    def products(self, tasks: Sequence[int] = ()) -> tuple[Product, ...]: ...


@dataclass(frozen=True)
class TableRequest:
    """What `dialog benchmark` asks of a paper: its tables of ``data`` written to ``out`` (Markdown, and a CSV
    beside it). ``methods`` are this paper's names among those asked for (empty: its defaults); a flag left at
    None was not given."""

    data: Path
    out: Path
    tasks: tuple[int, ...] = ()
    methods: tuple[str, ...] = ()
    epochs: int | None = None
    seeds: int | None = None
    folds: int | None = None
    streamed: bool = False
    records: Path | None = None  # Table 6 streamed: where the corpus' tf.Example files are kept between runs
    jobs: int | None = None
    progress: Callable[[str], None] = print
    several: bool = False  # the corpus holds tasks of other papers too (their tables are written beside)


class Paper(Protocol):
    """A paper: its corpus, its methods, its tables and its pipeline product."""

    name: str  # "babi": its packages are data/<name> and models/<name>; its name in the method registry
    title: str  # "dialog bAbI (Bordes et al.)": how messages name it
    pipeline: str  # TURNS or MOVIE
    tasks: Mapping[int, str]  # its task table: number -> name
    methods_module: str  # the module that registers its methods (models.methods.register) when imported
    train_models: Mapping[str, str]  # `dialog train --model` choices -> registered method; the first is the default
    train_help: str  # what each of them is, for `dialog train --help`
    table_flags: frozenset[str]  # the TABLE_FLAGS its tables honour
    profiles: Mapping[str, Profile]  # the pipeline's profiles: quick and full
    schema: str | None  # its curated schema (a schema.pbtxt path); None: the pipeline's own for its kind
    challenges: bool  # its corpus has challenge sets (a labels sidecar): the Evaluators slice by them

    def tasks_in(self, corpus: str | Path) -> tuple[int, ...]:
        """Its tasks a local corpus directory holds (empty: none of this paper)."""
        ...

    def task_label(self, task: int) -> str:
        """The ``task`` feature of a task's examples, which names its slices ("babi-1", "dstc2", "banking")."""
        ...

    def train(self, corpus: Path, task: int | None, model: str, out: str, options: Mapping[str, Any],
              settings: Any) -> dict[str, Any]:
        """Fit ``model`` (a ``train_models`` key) on a task's trn, choose on dev, export under ``out``; the
        summary. ``options`` are the command's model flags given (hops, learning rate, preset...): one this paper's
        model has not is a ValueError naming it. ``settings``: a ``models.methods.Settings`` (verbosity, logs)."""
        ...

    def tables(self, request: TableRequest) -> list[Path]:
        """Write its tables of ``request.data``; the files written."""
        ...


class LazyProfiles:
    """A paper's ``profiles``, imported from ``profiles_module`` when first asked for: they build TensorFlow
    configs, which the command line's lookup of a paper does not need."""

    profiles_module: str

    @property
    def profiles(self) -> Mapping[str, Profile]:
        return importlib.import_module(self.profiles_module).PROFILES


REGISTRY: dict[str, Paper] = {}


def register(paper: Paper) -> Paper:
    """Add ``paper``: its module does ``PAPER = register(...)`` when imported. A second paper of one name is an
    error, not a silent replacement."""
    if REGISTRY.get(paper.name, paper) is not paper:
        raise ValueError(f"paper {paper.name!r} is registered twice")
    unknown = set(paper.table_flags) - set(TABLE_FLAGS)
    if unknown:
        raise ValueError(f"paper {paper.name!r}: unknown table flags {sorted(unknown)}; choose from {TABLE_FLAGS}")
    REGISTRY[paper.name] = paper
    return paper


def modules() -> tuple[str, ...]:
    """The paper modules, in lookup order: those ``DIALOG_PAPERS`` names first (a plug-in may claim a task number
    before a built-in paper does), then the built-in ones."""
    extra = tuple(m.strip() for m in os.environ.get(PAPERS_VARIABLE, "").split(",") if m.strip())
    return tuple(dict.fromkeys((*extra, *BUILT_IN)))


def papers() -> dict[str, Paper]:
    """Every paper, in lookup order: each module's ``PAPER``, which it registered when imported."""
    found: dict[str, Paper] = {}
    for module in modules():
        try:
            paper = importlib.import_module(module).PAPER
        except (ImportError, AttributeError) as error:
            raise ValueError(f"paper module {module!r} cannot be imported, or registers no PAPER: {error}") from None
        found.setdefault(paper.name, paper)
    return found


def get(name: str) -> Paper:
    """The paper ``name``; a clear error listing the choices otherwise."""
    known = papers()
    if name not in known:
        raise ValueError(f"unknown paper {name!r}; choose from {list(known)}")
    return known[name]


def present(corpus: str | Path) -> list[tuple[Paper, tuple[int, ...]]]:
    """The papers a local corpus directory holds tasks of, each with its tasks (no task is claimed twice: the
    first paper in lookup order takes it). A name that looks like a corpus file but is not one is a ValueError."""
    found: list[tuple[Paper, tuple[int, ...]]] = []
    claimed: set[int] = set()
    for paper in papers().values():
        tasks = tuple(t for t in paper.tasks_in(corpus) if t not in claimed)
        if tasks:
            found.append((paper, tasks))
            claimed.update(tasks)
    return found


def turn_label(task: int) -> str:
    """The ``task`` feature of a task of dialog-bAbI files, as the first paper of that kind holding the task number
    names it; ``task-N`` for a number no paper holds."""
    for paper in papers().values():
        if paper.pipeline == TURNS and task in paper.tasks:
            return paper.task_label(task)
    return f"task-{task}"


def describe(found: Sequence[tuple[Paper, tuple[int, ...]]]) -> str:
    return "; ".join(f"{paper.title} (task {', '.join(map(str, tasks))})" for paper, tasks in found) or "no task"


def held(corpus: str | Path, tasks: Sequence[int] = ()) -> list[tuple[Paper, tuple[int, ...]]]:
    """:func:`present`, each paper with its tasks among ``tasks`` (default: all), those with none left out. A
    corpus of no paper's layout is a FileNotFoundError; a task it lacks, a ValueError saying what it holds."""
    found = present(corpus)
    if not found:
        raise FileNotFoundError(f"{corpus}: no task of any paper's layout (dialog-bAbI files named "
                                "dialog-babi-task{N}-{name}-{split}.txt, or Movie Dialog task folders such as "
                                "task1_qa/)")
    missing = sorted(set(tasks) - {t for _, own in found for t in own})
    if missing:
        raise ValueError(f"{corpus} has no files of task {', '.join(map(str, missing))} (it holds "
                         f"{describe(found)})")
    chosen = [(paper, tuple(t for t in own if not tasks or t in tasks)) for paper, own in found]
    return [(paper, own) for paper, own in chosen if own]


def of_corpus(corpus: str | Path, tasks: Sequence[int] = ()) -> tuple[Paper, tuple[int, ...]]:
    """The one paper of a corpus' tasks (``tasks``: those asked for; default every task it holds) and those
    tasks; errors as :func:`held`'s, and a ValueError naming them for tasks of several papers."""
    chosen = held(corpus, tasks)
    if len(chosen) > 1:
        raise ValueError(f"{corpus} holds tasks of several papers: {describe(chosen)}; choose one paper's with "
                         "--tasks")
    return chosen[0]

