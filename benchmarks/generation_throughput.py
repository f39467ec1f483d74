"""Restaurant-corpus generation throughput: dialogs per second, single-process and through Beam.

    .venv/bin/python benchmarks/generation_throughput.py [--dialogs 1000 --dialogs 10000] [--beam-workers 2]

Each configuration writes the full corpus (tasks 1-5, four splits each, candidates, KB) into a temporary
directory and is timed end to end, Beam's start-up included. Prints one JSON line per configuration on stdout, as
every benchmark does (progress on stderr).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import click

from data.babi.generation import GenerationPlan, generate


def _corpus_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.iterdir())


@click.command()
@click.option("--dialogs", "sizes", multiple=True, type=int, default=(1000, 10000), show_default=True,
              help="Dialogs per split and task (repeatable).")
@click.option("--beam-workers", default=os.cpu_count() or 2, show_default=True, help="multi_processing workers.")
@click.option("--seed", default=0, show_default=True)
def main(sizes: tuple[int, ...], beam_workers: int, seed: int) -> None:
    configurations = [
        ("single process", "local", ()),
        ("Beam DirectRunner in_memory", "beam", ("--direct_running_mode=in_memory",)),
        (f"Beam DirectRunner multi_processing x{beam_workers}", "beam",
         ("--direct_running_mode=multi_processing", f"--direct_num_workers={beam_workers}")),
    ]
    for size in sizes:
        plan = GenerationPlan(seed=seed, dialogs_per_split=size)
        for label, runner, beam_args in configurations:
            out = Path(tempfile.mkdtemp(prefix="bench-generate-"))
            try:
                start = time.perf_counter()
                generate(plan, out, runner=runner, beam_args=beam_args)
                seconds = time.perf_counter() - start
                megabytes = _corpus_bytes(out) / 1e6
            finally:
                shutil.rmtree(out, ignore_errors=True)
            click.echo(f"{label}: {plan.total_dialogs} dialogs in {seconds:.1f} s", err=True)
            click.echo(json.dumps({"measure": "generation", "runner": label, "dialogs_per_split": size,
                                   "dialogs": plan.total_dialogs, "seconds": round(seconds, 2),
                                   "dialogs_per_second": round(plan.total_dialogs / seconds),
                                   "corpus_mb": round(megabytes, 1), "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
