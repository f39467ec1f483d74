"""Peak memory of a pipeline run, by component: which component sets the run's peak.

    .venv/bin/python benchmarks/pipeline_memory.py --root R [--interval 5] [--samples F] [--stdout F] -- \
        --data DIR [other `dialog pipeline` flags]

Runs ``dialog pipeline --root R ...`` as a child, samples the resident memory of its process tree every
``--interval`` seconds, then reads the run's component windows from its metadata store
(``pipeline.summary.component_windows``, as the pipeline's component seconds count them). One JSON line per
component (its seconds, the largest sample inside its window, and the sample count), then one for the run: wall
seconds, the largest sample, and the kernel's peak of the largest single process (``ru_maxrss``, what
``/usr/bin/time -v`` reports). GB here are 10^9 bytes, as docs/movie.md counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_speed import REPOSITORY, emit, tree_rss  # noqa: E402


def by_component(samples: list[tuple[float, int]], windows: list[tuple[str, float, float]]) -> list[dict]:
    """Each window's largest sample (GB) and how many samples fell in it."""
    rows = []
    for name, start, end in windows:
        inside = [rss for at, rss in samples if start <= at <= end]
        rows.append({"component": name, "seconds": round(end - start, 1),
                     "peak_rss_gb": round(max(inside) / 1e9, 2) if inside else None, "samples": len(inside)})
    return rows


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--root", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The pipeline root (its metadata store is read after the run).")
@click.option("--interval", default=5.0, show_default=True, help="Seconds between samples of the process tree.")
@click.option("--samples", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write every sample here, one JSON line each (epoch seconds, bytes).")
@click.option("--stdout", "printed", type=click.Path(dir_okay=False, path_type=Path),
              help="Keep what the pipeline prints on stdout (its summary's JSON line) here.")
@click.argument("pipeline_args", nargs=-1, type=click.UNPROCESSED)
def main(root: Path, interval: float, samples: Path | None, printed: Path | None,
         pipeline_args: tuple[str, ...]) -> None:
    command = [str(Path(sys.executable).with_name("dialog")), "pipeline", "--root", str(root), *pipeline_args]
    started = time.time()
    with open(printed or os.devnull, "w") as out:
        child = subprocess.Popen(command, cwd=REPOSITORY, stdout=out, env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
        taken: list[tuple[float, int]] = []
        done = threading.Event()

        def sample() -> None:
            while not done.wait(interval):
                taken.append((time.time(), tree_rss(child.pid)))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        done.set()
        sampler.join()
    if samples is not None:
        samples.write_text("".join(json.dumps({"at": at, "rss": rss}) + "\n" for at, rss in taken))
    if os.waitstatus_to_exitcode(status):
        raise click.ClickException(f"{' '.join(command)} failed ({os.waitstatus_to_exitcode(status)})")
    from pipeline.summary import component_windows, metadata_reader

    for row in by_component(taken, component_windows(metadata_reader(root / "metadata" / "metadata.db"))):
        emit({"measure": "pipeline_component_memory", **row})
    emit({"measure": "pipeline_memory", "wall_seconds": round(time.time() - started, 1),
          "peak_sampled_gb": round(max((rss for _, rss in taken), default=0) / 1e9, 2),
          "peak_process_gb": round(usage.ru_maxrss * 1024 / 1e9, 2), "interval_seconds": interval})


if __name__ == "__main__":
    main()
