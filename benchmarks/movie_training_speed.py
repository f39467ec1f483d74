"""Cost per example of the pipeline's Movie Dialog Trainer (the streamed joint MemN2N), one JSON line per phase.

    .venv/bin/python benchmarks/movie_training_speed.py --examples PIPELINE_ROOT/MovieExampleGen/examples/ID \
        [--batch-size 128] [--epochs 1] [--sampled 1000] [--learning-rate 0.005]
        [--steps-per-execution 1]
        [--dense-updates]

It reads an Examples artifact of MovieExampleGen (what the Trainer reads) and times, in this process:

- ``vocabulary``: the streamed pass counting tokens (appendix A's dictionary);
- ``read``: reading and parsing the training records alone;
- ``featurise``: reading and featurising them (entity tokens, KB lookup, word ids), without training;
- ``epoch``: each training epoch (reading, featurising and training, as the Trainer runs it) and its dev evaluation.

Each line has the seconds, the examples and the milliseconds per example; the last line the peak RSS.
"""

from __future__ import annotations

import glob
import json
import posixpath
import resource
import time
from dataclasses import replace

import click
import tensorflow as tf

from components.movie_example_gen import read_movie_resources
from models.movie.records import MovieCandidates
from models.movie.streamed import StreamedConfig, build_parts, count_tokens, records, train_streamed, training_data


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def timed(phase: str, dataset: tf.data.Dataset, count: int | None = None) -> int:
    """Iterate ``dataset`` to its end; emit the phase's seconds and cost per example; return the example count."""
    started = time.perf_counter()
    seen = 0
    for batch in dataset:
        seen += int(tf.shape(batch[1] if isinstance(batch, tuple) else batch["task"])[0])
    seconds = time.perf_counter() - started
    emit({"phase": phase, "seconds": round(seconds, 2), "examples": count or seen,
          "ms_per_example": round(1000 * seconds / max(count or seen, 1), 4)})
    return seen


@click.command()
@click.option("--examples", required=True, help="An Examples artifact written by MovieExampleGen.")
@click.option("--batch-size", default=StreamedConfig.batch_size, show_default=True)
@click.option("--epochs", default=1, show_default=True)
@click.option("--sampled", default=StreamedConfig.sampled, show_default=True)
@click.option("--learning-rate", default=StreamedConfig.learning_rate, show_default=True)
@click.option("--steps-per-execution", default=StreamedConfig.steps_per_execution, show_default=True)
@click.option("--dense-updates", is_flag=True, help="Dense embedding gradients and Keras' Adam (row_updates off).")
def main(examples: str, batch_size: int, epochs: int, sampled: int, learning_rate: float,
         steps_per_execution: int, dense_updates: bool) -> None:
    resources = read_movie_resources(examples)
    train = sorted(glob.glob(posixpath.join(examples, "Split-train", "*")))
    dev = sorted(glob.glob(posixpath.join(examples, "Split-eval", "*")))
    config = replace(StreamedConfig(), batch_size=batch_size, epochs=epochs, patience=None, sampled=sampled,
                     learning_rate=learning_rate,
                     row_updates=not dense_updates, steps_per_execution=steps_per_execution)
    candidates = MovieCandidates.from_json(resources["candidates"])
    started = time.perf_counter()
    counted = count_tokens(train)
    counts, longest = counted.tokens, counted.longest
    emit({"phase": "vocabulary", "seconds": round(time.perf_counter() - started, 2), "tokens": len(counts)})
    parts = build_parts(resources["entities"], resources["triples"], candidates, counts, longest, config)
    size = timed("read", records(train, batch_size))
    timed("featurise", training_data(parts, train, config), size)
    summary = train_streamed(resources["entities"], resources["triples"], candidates, train, dev, config)
    for epoch in summary["history"]:
        emit({"phase": "epoch", "epoch": epoch["epoch"], "seconds": epoch["seconds"], "examples": size,
              "ms_per_example": round(1000 * epoch["seconds"] / size, 4), "eval_seconds": epoch["eval_seconds"],
              "dev_hits": epoch["dev_hits"], "batch_size": batch_size, "sampled": sampled,
              "row_updates": config.row_updates, "steps_per_execution": steps_per_execution,
              "learning_rate": learning_rate})
    emit({"phase": "peak", "rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2, 2),
          "vocabulary_size": summary["vocabulary_size"], "candidates": summary["candidates"],
          "kb_sentences": summary["kb_sentences"]})


if __name__ == "__main__":
    main()
