"""How every method of the three papers is fitted, and the one registry that names them.

A *method* is anything a paper table compares: a rule-based system, an IR baseline, a network. Each is fitted the
same way, ``method.fit(task, work_dir, settings) -> Ranker``: on a task already loaded (``task``), writing what it
trains under ``work_dir`` (its SavedModel, when it exports one), with ``settings`` saying how hard to work. The
ranker it returns answers ``rank(examples, k)`` the same way everywhere. The command line (``dialog train``,
``dialog benchmark``), the TFX Trainer's ``run_fn`` and the paper tables find methods by name in :data:`REGISTRY`.

Each paper's package registers its own methods when its methods module is imported (:func:`load` imports those
``models.papers`` names), so this core names no paper. No TensorFlow here: a rule-based system is fitted without it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from models.training import TrainConfig

Example = TypeVar("Example", contravariant=True)
Task = TypeVar("Task", contravariant=True)

class Ranker(Protocol[Example]):
    """A fitted method: for each example, its best answers, best first.

    ``rank`` returns one list per example with at most ``k`` answers (a rule-based system has one answer, so its
    lists hold one). The dialog-bAbI, DSTC2 and banking methods rank turn examples; the Movie Dialog ones rank their
    own examples."""

    def rank(self, examples: Sequence[Example], k: int = 10) -> list[list[str]]: ...


class OrderedRanker(Protocol[Example]):
    """A ranker over a fixed candidate list that can give its whole order (what :class:`Among` restricts)."""

    candidates: Sequence[str]

    def order(self, examples: Sequence[Example]) -> Iterable[Iterable[int]]: ...


def first_k(candidates: Sequence[str], indices: Iterable[Iterable[int]], k: int,
            among: Collection[str] | None = None) -> list[list[str]]:
    """Each row of candidate ``indices`` (best first) as the first ``k`` candidates, keeping those in ``among``."""
    allowed = set(among) if among is not None else None
    return [list(islice((a for a in (candidates[i] for i in row) if allowed is None or a in allowed), k))
            for row in indices]


@dataclass(frozen=True)
class Among:
    """A ranker whose answers are restricted to ``among``: a split ranked among its own candidates (a Movie
    Dialog discussion split has its own candidate file) by a model trained over all of them."""

    ranker: OrderedRanker
    among: Collection[str] | None = None

    def rank(self, examples: Sequence, k: int = 10) -> list[list[str]]:
        return first_k(self.ranker.candidates, self.ranker.order(examples), k, self.among)


@dataclass(frozen=True)
class Fitted:
    """A fitted method's ranker with how it was chosen (``note``, for the tables) and what training reported
    (``summary``: best epoch, dev accuracy, seconds; empty for methods that do not train). It ranks as its ranker
    does."""

    ranker: Ranker
    note: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    # Splits scored with a ranker of their own: the OOV test sets with the model chosen on an OOV dev set, where a
    # method chooses one for them (Table 2's MemN2N rows).
    by_split: dict[str, Ranker] = field(default_factory=dict)

    def rank(self, examples: Sequence, k: int = 10) -> list[list[str]]:
        return self.ranker.rank(examples, k)


def best_answers(ranker: Ranker, examples: Sequence) -> list[str]:
    """Each example's first-ranked answer ("" when a ranker has none)."""
    return [row[0] if row else "" for row in ranker.rank(examples, 1)] if examples else []


def for_split(ranker: Ranker, split: str) -> Ranker:
    """The ranker that scores ``split``: a :class:`Fitted`'s choice for it, any other ranker itself."""
    return ranker.by_split.get(split, ranker.ranker) if isinstance(ranker, Fitted) else ranker


def note_of(ranker: Ranker) -> str:
    return ranker.note if isinstance(ranker, Fitted) else ""


def unwrapped(ranker: Ranker) -> Ranker:
    """The ranker a :class:`Fitted` holds (the ranker itself otherwise), for what only it offers (an order, a
    route)."""
    return ranker.ranker if isinstance(ranker, Fitted) else ranker


class NotApplicable(ValueError):
    """The method has nothing to offer on this task (no rule-based system for it, no KB to answer from): the
    tables print n/a and the reason."""


@dataclass(frozen=True)
class Settings:
    """What a caller sets of a method's fitting; each method reads what applies to it.

    ``config`` is a neural model's exact training settings (``dialog train``'s flags, a pipeline profile's); without
    it a method follows its paper's recipe for the task, at most ``epochs`` epochs when given. ``memo`` is shared by
    the methods of one run (a table), so that ablations reuse the model they ablate; it is never module state."""

    epochs: int | None = None
    config: TrainConfig | None = None
    verbose: int = 0
    log_dir: str | None = None
    top_k: int = 10
    seed: int = 0  # the training seed of a method following its paper's recipe (a config carries its own)
    evaluate_dev: bool = True  # rank dev once more for the summary (the tables and the pipeline score it themselves)
    chosen_on: str = "dev"  # what the notes call the split a variant or epoch is chosen on (task 6: a fold of trn)
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


class Method(Protocol[Task]):
    """How every method is fitted: on ``task`` (loaded once by the caller), writing under ``work_dir`` (a local
    ``Path``, or a string that may name a remote directory, ``gs://...``, for a model exported there)."""

    def fit(self, task: Task, work_dir: Path | str, settings: Settings) -> Ranker: ...


@dataclass(frozen=True)
class Registered:
    """A method in the registry: its name, the paper whose tables it belongs to, the title a table prints, and
    whether its fit depends on ``Settings.seed`` (a table over several seeds runs the others once)."""

    name: str
    paper: str
    title: str
    function: Callable[[Any, Path | str, Settings], Ranker]
    seeded: bool = True
    # Builds the method's config from its fields (``dataclasses.asdict`` of one, as a TFX Trainer's JSON config
    # carries it): a network's ``TrainConfig`` by default, the state ranker its own.
    config: Callable[..., Any] | None = None

    def make_config(self, **fields: Any) -> Any:
        if self.config is None:
            from models.training import train_config  # TensorFlow: only a network's config needs it

            return train_config(**fields)
        return self.config(**fields)

    def fit(self, task: Any, work_dir: Path | str, settings: Settings) -> Ranker:
        return self.function(task, work_dir, settings)


REGISTRY: dict[str, Registered] = {}


def register(name: str, paper: str, title: str, seeded: bool = True,
             config: Callable[..., Any] | None = None) -> Callable[[Callable], Callable]:
    """Register ``function(task, work_dir, settings) -> Ranker`` as the method ``name`` of ``paper`` (``seeded``:
    whether its fit depends on the training seed; ``config``: its config type, when not a network's
    ``TrainConfig``). Names are unique across papers: a second registration of a name is an error, not a silent
    replacement."""
    def add(function: Callable[[Any, Path, Settings], Ranker]) -> Callable[[Any, Path, Settings], Ranker]:
        if name in REGISTRY:
            raise ValueError(f"method {name!r} is registered twice ({REGISTRY[name].paper}, {paper})")
        REGISTRY[name] = Registered(name, paper, title, function, seeded, config)
        return function

    return add


def load(paper: str | None = None) -> dict[str, Registered]:
    """The methods of ``paper`` (default: of every paper, ``models.papers``) registered, by importing their
    modules; the registry."""
    from models import papers

    for found in ([papers.get(paper)] if paper is not None else papers.papers().values()):
        importlib.import_module(found.methods_module)
    return REGISTRY


def get(name: str, paper: str | None = None) -> Registered:
    """The method ``name`` (of ``paper``, when given); a clear error listing the choices otherwise."""
    load(paper)
    found = REGISTRY.get(name)
    if found is None or (paper is not None and found.paper != paper):
        raise ValueError(f"unknown method {name!r}; choose from {names(paper)}")
    return found


def names(paper: str | None = None) -> list[str]:
    """The registered names (of ``paper``), in registration order: a table's column order."""
    load(paper)
    return [name for name, method in REGISTRY.items() if paper is None or method.paper == paper]
