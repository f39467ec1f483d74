"""Write a restaurant corpus (tasks 1-5) in the public dialog-bAbI layout.

A dialog is a function of (seed, task, split, index) only, so a file is rendered in shards of dialog indices:
one after the other in this process for the default 1,000 dialogs per split, or in parallel through an Apache
Beam pipeline (DirectRunner unless Beam options say otherwise) for large corpora. Both write the same bytes
(``data.sharded_files``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from data import babi_format, sharded_files
from data.atomic import one_writer, staged_files
from data.babi.simulator import LITERAL_MIN_RESULTS, MIN_RESULTS, OOV_SPLIT, TASKS, build_world, generate_dialog
from data.corpus import CandidateFile, DialogFile, KBFile
from data.layout import SHARED_CANDIDATES, SHARED_KB, dialog_file_name

RESTAURANT_SPLITS = ("trn", "dev", "tst", OOV_SPLIT)
DEFAULT_DIALOGS = 1000
SHARD_SIZE = 1000


@dataclass(frozen=True)
class GenerationPlan:
    """What to generate. ``task5_min_results`` is the fewest restaurants a task-5 dialog's final API call returns:
    3 (the default) gives Table 1's figures, 1 (``LITERAL_MIN_RESULTS``) is the paper's text read literally."""

    seed: int
    dialogs_per_split: int = DEFAULT_DIALOGS
    tasks: tuple[int, ...] = TASKS
    splits: tuple[str, ...] = RESTAURANT_SPLITS
    task5_min_results: int = MIN_RESULTS[5]

    def __post_init__(self) -> None:
        if not LITERAL_MIN_RESULTS <= self.task5_min_results <= MIN_RESULTS[5]:
            raise ValueError(f"task5_min_results must be {LITERAL_MIN_RESULTS}-{MIN_RESULTS[5]}, "
                             f"not {self.task5_min_results}")

    @property
    def files(self) -> list[tuple[int, str]]:
        return [(task, split) for task in self.tasks for split in self.splits]

    @property
    def total_dialogs(self) -> int:
        return len(self.files) * self.dialogs_per_split


def render_dialogs(seed: int, task: int, split: str, start: int, stop: int, min_results: int | None = None) -> str:
    """Dialogs ``start..stop-1`` of a file, rendered as text (each followed by a blank line); ``min_results`` as
    in ``generate_dialog``."""
    world = build_world(seed)
    dialogs = [generate_dialog(world, task, split, index, min_results) for index in range(start, stop)]
    return babi_format.render_dialogs(DialogFile(dialogs))


def estimated_bytes(plan: GenerationPlan, sample: int = 8) -> int:
    """About how many bytes the plan's dialog files take: ``sample`` dialogs of each task rendered (the first of
    ``trn``), their mean size times the dialogs to write. The side files (KB, candidates) are a few hundred KB."""
    size = 0
    for task in plan.tasks:
        count = min(sample, plan.dialogs_per_split)
        min_results = plan.task5_min_results if task == 5 else None
        rendered = render_dialogs(plan.seed, task, plan.splits[0], 0, count, min_results)
        size += len(rendered.encode()) * plan.dialogs_per_split * len(plan.splits) // count
    return size


@dataclass(frozen=True)
class _ShardRenderer:
    """Picklable for Beam's worker processes."""

    seed: int
    task5_min_results: int = MIN_RESULTS[5]

    def __call__(self, shard: sharded_files.Shard) -> str:
        task, split = shard.key
        min_results = self.task5_min_results if task == 5 else None
        return render_dialogs(self.seed, task, split, shard.start, shard.stop, min_results)


def shards(plan: GenerationPlan) -> list[sharded_files.Shard]:
    return [shard for task, split in plan.files
            for shard in sharded_files.shards_of(dialog_file_name(task, split), (task, split),
                                                 plan.dialogs_per_split, SHARD_SIZE)]


def _keep_the_kb_of_other_tasks(plan: GenerationPlan, out: Path) -> None:
    """Refuse to replace the shared KB (and candidates) under tasks this plan does not write again: their API
    results name the old KB's restaurants. Adding tasks of the same seed keeps the same files, and is fine."""
    kb = out / SHARED_KB
    kept = sorted({task for task, split in _dialog_files(out)} - set(plan.tasks))
    if not kept or not kb.is_file():
        return
    if babi_format.read_text(kb) != babi_format.render_kb(_shared_kb(plan.seed)):
        raise ValueError(f"{out}: tasks {', '.join(map(str, kept))} use its KB ({SHARED_KB}), which --seed "
                         f"{plan.seed} would replace; generate them again with this seed (--tasks), or write "
                         "elsewhere")


def _dialog_files(out: Path) -> list[tuple[int, str]]:
    """(task, split) of the restaurant dialog files already in ``out``."""
    return [(task, split) for task in TASKS for split in RESTAURANT_SPLITS
            if (out / dialog_file_name(task, split)).is_file()]


def _shared_kb(seed: int) -> KBFile:
    """The KB file every restaurant task of the seed's corpus shares (both KBs: the OOV test sets' too)."""
    world = build_world(seed)
    return KBFile(world.kb.facts() + world.kb_oov.facts())


def _write_side_files(out: Path, seed: int) -> None:
    world = build_world(seed)
    babi_format.write_candidates(out / SHARED_CANDIDATES, CandidateFile(world.candidates()))
    babi_format.write_kb(out / SHARED_KB, _shared_kb(seed))


def generate(plan: GenerationPlan, out: str | Path, runner: str = "auto", beam_args: Sequence[str] = ()) -> list[Path]:
    """Generate a corpus with the chosen runner: ``local``, ``beam``, or ``auto`` (Beam for large corpora).

    Returns the written dialog files; the candidates and KB files are written beside them. The files are staged
    and renamed into ``out`` together once all are written. One writer at a time: another process writing ``out``
    makes this one raise ``data.atomic.DirectoryBusy``.
    """
    sharded_files.choose_runner(runner, plan.total_dialogs, beam_args)  # a bad runner fails before any work
    with one_writer(out):  # a second generate into ``out`` is refused, not mixed with this one
        _keep_the_kb_of_other_tasks(plan, Path(out))
        sharded_files.clear_staging(Path(out))
        renderer = _ShardRenderer(plan.seed, plan.task5_min_results)
        with staged_files(out) as staging:  # every file or none: a full disk never mixes two corpora
            staged = sharded_files.write_files(shards(plan), renderer, staging, runner, beam_args)
            _write_side_files(Path(staging), plan.seed)
    return [Path(out) / path.relative_to(staging) for path in staged]
