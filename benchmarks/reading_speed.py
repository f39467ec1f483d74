"""Seconds to read a corpus file as text through the project's reader (``data.babi_format.read_text``), which
every corpus, KB and labels read goes through: one JSON line per file.

    PYTHONPATH=CHECKOUT .venv/bin/python benchmarks/reading_speed.py FILE [FILE ...] [--repeats 5]

Run it with another checkout on ``PYTHONPATH`` to compare two versions of the reader on one host.
"""

from __future__ import annotations

import json
import os
import time

import click


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--repeats", default=5, show_default=True, help="Reads per file; the fastest is reported.")
def main(files: tuple[str, ...], repeats: int) -> None:
    from data.babi_format import read_text

    for path in files:
        seconds = []
        for _ in range(repeats):
            start = time.perf_counter()
            read_text(path)
            seconds.append(time.perf_counter() - start)
        megabytes = os.path.getsize(path) / 1e6
        fastest = min(seconds)
        click.echo(json.dumps({"measure": "read_text", "file": os.path.basename(path), "megabytes": round(megabytes, 1),
                               "seconds": round(fastest, 4), "ms_per_mb": round(1000 * fastest / megabytes, 2)}))


if __name__ == "__main__":
    main()
