"""Latency of a pushed Movie Dialog model's ``serving_examples`` signature, the call the Evaluator makes.

    .venv/bin/python benchmarks/movie_serving_latency.py --model M --examples DIR [--calls 200] [--batch 1 --batch 128]

M is a SavedModel or a pushed model's base directory (``serving_model/memn2n``: its newest version). DIR holds gzipped
TFRecords of serialized tf.Examples, as a MovieExampleGen split writes them (``.../examples/N/Split-test``). Each
call ranks ``batch`` consecutive examples among their candidate ranges, as the Evaluator's calls do (at most
``components.dialog_extractors.MAX_TURNS_PER_CALL`` a call); the first 10 calls of each batch size warm up and are
not counted. One JSON line per batch size: median, p90 and p99 in ms a call, and the median per example.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np
import tensorflow as tf

from models.serving.ranker import load_model

WARM_UP = 10


@click.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--examples", "examples_dir", required=True, type=click.Path(exists=True, file_okay=False,
                                                                         path_type=Path))
@click.option("--calls", default=200, show_default=True, type=click.IntRange(min=1), help="Calls timed per batch.")
@click.option("--batch", "batches", multiple=True, type=click.IntRange(min=1), default=(1, 128), show_default=True)
def main(model_dir: Path, examples_dir: Path, calls: int, batches: tuple[int, ...]) -> None:
    resolved, loaded = load_model(model_dir)
    serve = loaded.signatures["serving_examples"]
    files = sorted(str(path) for path in examples_dir.glob("*.gz"))
    if not files:
        raise click.UsageError(f"{examples_dir}: no gzipped TFRecord files")
    wanted = (calls + WARM_UP) * max(batches)
    records = [r.numpy() for r in tf.data.TFRecordDataset(files, compression_type="GZIP").take(wanted)]
    for batch in batches:
        latencies = []
        for i in range(calls + WARM_UP):
            start = (i * batch) % max(len(records) - batch, 1)
            examples = tf.constant(records[start:start + batch])
            started = time.perf_counter()
            serve(examples=examples)
            if i >= WARM_UP:
                latencies.append((time.perf_counter() - started) * 1000)
        ms = np.array(latencies)
        click.echo(json.dumps({"model": str(resolved), "batch": batch, "calls": calls,
                               "median_ms": round(float(np.median(ms)), 2),
                               "median_ms_per_example": round(float(np.median(ms)) / batch, 3),
                               "p90_ms": round(float(np.percentile(ms, 90)), 2),
                               "p99_ms": round(float(np.percentile(ms, 99)), 2)}))


if __name__ == "__main__":
    main()
