"""Write large generated text files in shards, in this process or through an Apache Beam pipeline.

A file is the concatenation of its shards in order, and a shard's text is a function of its arguments only, so
both paths write the same bytes whatever the runner. Each file goes to a temporary name first and is renamed
into place: a file is either the previous one or the complete new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from data.atomic import atomic_output, remove_entry
from data.progress import bar

# Above this many examples (or dialogs) in all, `runner="auto"` picks Beam.
BEAM_THRESHOLD = 50_000
RUNNERS = ("auto", "local", "beam")


@dataclass(frozen=True)
class Shard:
    """Lines ``start..stop-1`` of the file ``name``; ``key`` tells the renderer what the file holds."""

    name: str
    key: tuple
    start: int
    stop: int


Renderer = Callable[[Shard], str]


def shards_of(name: str, key: tuple, count: int, shard_size: int) -> list[Shard]:
    """``count`` items of one file cut into shards of ``shard_size``."""
    return [Shard(name, key, start, min(start + shard_size, count)) for start in range(0, count, shard_size)]


def default_beam_args() -> list[str]:
    """DirectRunner with a worker process per core: faster than the single process on a large restaurant corpus
    (benchmarks/generation_throughput.py), where the in-memory mode gains nothing."""
    return ["--direct_running_mode=multi_processing", f"--direct_num_workers={os.cpu_count() or 1}"]


def choose_runner(runner: str, items: int, beam_args: Sequence[str] = ()) -> str:
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if runner == "auto":
        return "beam" if items > BEAM_THRESHOLD or beam_args else "local"
    return runner


def _names_in_order(shards: Sequence[Shard]) -> list[str]:
    return list(dict.fromkeys(shard.name for shard in shards))


def write_local(shards: Sequence[Shard], render: Renderer, out: Path) -> list[Path]:
    """Render the shards one after the other in this process, streaming each file to disk."""
    written = []
    with bar(sum(shard.stop - shard.start for shard in shards), "generating", "dialog") as progress:
        for name in _names_in_order(shards):
            path = out / name
            with atomic_output(path) as target:
                for shard in (s for s in shards if s.name == name):
                    target.write(render(shard).encode("utf-8"))
                    progress.update(shard.stop - shard.start)
            written.append(path)
    return written


STAGING_PREFIX = ".generate-"


def clear_staging(out: Path) -> list[Path]:
    """Remove the shard staging directories a killed Beam generation left in ``out``. Only a caller that holds
    ``out``'s writer lock (``data.atomic.one_writer``) may: another writer's staging would be its work in progress."""
    leftovers = sorted(out.glob(f"{STAGING_PREFIX}*")) if out.is_dir() else []
    for path in leftovers:
        with contextlib.suppress(OSError):
            remove_entry(path)  # a link planted under the name: the link goes, its target stays
    return leftovers


def write_beam(shards: Sequence[Shard], render: Renderer, out: Path, beam_args: Sequence[str] = ()) -> list[Path]:
    """Render the shards in parallel through Beam (``beam_args``; default: one worker process per core), then join.

    ``render`` must be picklable (a module-level function or a ``functools.partial`` of one). Shards are staged
    on the local filesystem, so a remote runner needs a shared ``out`` directory.
    """
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    names = _names_in_order(shards)
    file_number = {name: i for i, name in enumerate(names)}

    def write_shard(shard: Shard) -> str:
        part = staging / f"{file_number[shard.name]:04d}.{shard.start:012d}"
        part.write_text(render(shard), encoding="utf-8", newline="")
        return str(part)

    try:
        with beam.Pipeline(options=PipelineOptions(list(beam_args) or default_beam_args())) as pipeline:
            _ = (pipeline
                 | "Shards" >> beam.Create(list(shards))
                 | "Reshuffle" >> beam.Reshuffle()
                 | "Render" >> beam.Map(write_shard))
        written = []
        for name in names:
            path = out / name
            _join_atomic(sorted(staging.glob(f"{file_number[name]:04d}.*")), path)
            written.append(path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written


def _join_atomic(parts: Iterable[Path], path: Path) -> None:
    with atomic_output(path) as target:
        for part in parts:
            with open(part, "rb") as source:
                shutil.copyfileobj(source, target)


def write_files(shards: Sequence[Shard], render: Renderer, out: str | Path, runner: str = "auto",
                beam_args: Sequence[str] = ()) -> list[Path]:
    """Write every file the shards make under ``out``, with the runner ``local``, ``beam`` or ``auto``."""
    out = Path(out)
    items = sum(shard.stop - shard.start for shard in shards)
    if choose_runner(runner, items, beam_args) == "beam":
        return write_beam(shards, render, out, beam_args)
    return write_local(shards, render, out)
