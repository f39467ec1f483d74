"""Write a restaurant corpus (tasks 1-5) in the public dialog-bAbI layout.

Two paths produce byte-identical files: a single-process loop for the default 1,000 dialogs per split, and an
Apache Beam pipeline (DirectRunner unless Beam options say otherwise) for large corpora. Beam renders fixed-size
shards of dialog indices in parallel; the shards are then joined in index order and renamed into place, so a
file is either the previous one or the complete new one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from data import babi_format
from data.corpus import CandidateFile, DialogFile, KBFile
from data.layout import SHARED_CANDIDATES, SHARED_KB, dialog_file_name
from data.restaurant_sim import OOV_SPLIT, TASKS, build_world, generate_dialog

RESTAURANT_SPLITS = ("trn", "dev", "tst", OOV_SPLIT)
DEFAULT_DIALOGS = 1000
SHARD_SIZE = 1000
# Above this many dialogs in all, `runner="auto"` picks Beam.
BEAM_THRESHOLD = 50_000


def default_beam_args() -> list[str]:
    """DirectRunner with a worker process per core: 1.6x the single process at 200,000 dialogs on 2 cores
    (benchmarks/generation_throughput.py), where the in-memory mode gains nothing."""
    return ["--direct_running_mode=multi_processing", f"--direct_num_workers={os.cpu_count() or 1}"]


@dataclass(frozen=True)
class GenerationPlan:
    seed: int
    dialogs_per_split: int = DEFAULT_DIALOGS
    tasks: tuple[int, ...] = TASKS
    splits: tuple[str, ...] = RESTAURANT_SPLITS

    @property
    def files(self) -> list[tuple[int, str]]:
        return [(task, split) for task in self.tasks for split in self.splits]

    @property
    def total_dialogs(self) -> int:
        return len(self.files) * self.dialogs_per_split


def render_shard(seed: int, task: int, split: str, start: int, stop: int) -> str:
    """Dialogs ``start..stop-1`` of a file, rendered as text (each followed by a blank line)."""
    world = build_world(seed)
    dialogs = [generate_dialog(world, task, split, index) for index in range(start, stop)]
    return babi_format.render_dialogs(DialogFile(dialogs))


def _write_side_files(out: Path, seed: int) -> None:
    world = build_world(seed)
    babi_format.write_candidates(out / SHARED_CANDIDATES, CandidateFile(world.candidates()))
    babi_format.write_kb(out / SHARED_KB, KBFile(world.kb.facts() + world.kb_oov.facts()))


def generate_local(plan: GenerationPlan, out: str | Path) -> list[Path]:
    """Generate in this process. Returns the written dialog files."""
    out = Path(out)
    written = []
    for task, split in plan.files:
        path = out / dialog_file_name(task, split)
        babi_format.write_text_atomic(path, render_shard(plan.seed, task, split, 0, plan.dialogs_per_split))
        written.append(path)
    _write_side_files(out, plan.seed)
    return written


def _shards(plan: GenerationPlan) -> list[tuple[int, str, int, int]]:
    return [(task, split, start, min(start + SHARD_SIZE, plan.dialogs_per_split))
            for task, split in plan.files for start in range(0, plan.dialogs_per_split, SHARD_SIZE)]


def generate_beam(plan: GenerationPlan, out: str | Path, beam_args: Sequence[str] = ()) -> list[Path]:
    """Generate through an Apache Beam pipeline.

    ``beam_args`` are Beam pipeline options; without any, the DirectRunner with one worker process per core.
    Shards are staged on the local filesystem, so a remote runner needs a shared ``out`` directory.
    """
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".generate-", dir=out))
    seed = plan.seed

    def write_shard(shard: tuple[int, str, int, int]) -> str:
        task, split, start, stop = shard
        name = staging / f"{dialog_file_name(task, split)}.{start:012d}"
        name.write_text(render_shard(seed, task, split, start, stop), encoding="utf-8", newline="")
        return str(name)

    try:
        with beam.Pipeline(options=PipelineOptions(list(beam_args) or default_beam_args())) as pipeline:
            _ = (pipeline
                 | "Shards" >> beam.Create(_shards(plan))
                 | "Reshuffle" >> beam.Reshuffle()
                 | "Generate" >> beam.Map(write_shard))
        written = []
        for task, split in plan.files:
            path = out / dialog_file_name(task, split)
            _join_atomic(sorted(staging.glob(f"{dialog_file_name(task, split)}.*")), path)
            written.append(path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _write_side_files(out, plan.seed)
    return written


def _join_atomic(parts: Iterable[Path], path: Path) -> None:
    with babi_format.atomic_output(path) as target:
        for part in parts:
            with open(part, "rb") as source:
                shutil.copyfileobj(source, target)


def generate(plan: GenerationPlan, out: str | Path, runner: str = "auto", beam_args: Sequence[str] = ()) -> list[Path]:
    """Generate a corpus with the chosen runner: ``local``, ``beam``, or ``auto`` (Beam for large corpora)."""
    if runner == "auto":
        runner = "beam" if plan.total_dialogs > BEAM_THRESHOLD or beam_args else "local"
    if runner == "local":
        return generate_local(plan, out)
    if runner == "beam":
        return generate_beam(plan, out, beam_args)
    raise ValueError(f"runner must be auto, local or beam, not {runner!r}")
