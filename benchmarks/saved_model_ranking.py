"""Ranking a split through an exported model, in batches of 256 turns: in the dialogs' order (each batch padded to
its longest memory, as ``SavedModelRanker`` ranked before) against ``SavedModelRanker.outputs``, which batches turns
of near equal memory length. Both run ``rounds`` times, alternating; one JSON line per run with its seconds and
whether its answers equal the dialog-order run's, then the medians. The tables rank every scored split of a corpus
so, once per fitted model (docs/results.md).

    .venv/bin/python benchmarks/saved_model_ranking.py --model M --data DIR --task 7 --split dev --split dev-OOP
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import click
import numpy as np
import tensorflow as tf

from data.layout import discover
from models.examples import TaskData, pad_batch
from models.serving.ranker import SavedModelRanker

BATCH = 256


def in_dialog_order(ranker: SavedModelRanker, examples: list) -> np.ndarray:
    """The candidate indices [N, top_k], batches taken in the examples' order."""
    parts = []
    for start in range(0, len(examples), BATCH):
        memory, speaker, query = pad_batch(examples[start:start + BATCH])
        parts.append(ranker.serve(memory=tf.constant(memory, tf.string), memory_speaker=tf.constant(speaker, tf.string),
                                  query=tf.constant(query, tf.string))["indices"].numpy())
    return np.concatenate(parts)


@click.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--data", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--task", required=True, type=int)
@click.option("--split", "splits", multiple=True, default=("dev",), show_default=True)
@click.option("--rounds", default=2, show_default=True, type=click.IntRange(min=1))
def main(model_dir: Path, data: Path, task: int, splits: tuple[str, ...], rounds: int) -> None:
    loaded = TaskData.load(discover(data)[task], splits=list(splits))
    examples = [e for split in splits for e in loaded.split(split)]
    ranker = SavedModelRanker(model_dir)
    ranker.outputs(examples[:BATCH])  # the first call of a loaded signature initialises it
    lengths = [len(e.memory) for e in examples]
    print(json.dumps({"examples": len(examples), "splits": list(splits),
                      "mean_memory": round(float(np.mean(lengths)), 2), "max_memory": max(lengths)}), flush=True)
    seconds: dict[str, list[float]] = {"dialog_order": [], "by_length": []}
    reference = None
    for _ in range(rounds):
        for name in seconds:
            started = time.perf_counter()
            indices = (in_dialog_order(ranker, examples) if name == "dialog_order"
                       else ranker.outputs(examples, BATCH)["indices"])
            seconds[name].append(round(time.perf_counter() - started, 2))
            reference = indices if reference is None else reference
            print(json.dumps({"order": name, "seconds": seconds[name][-1],
                              "same_indices": bool(np.array_equal(indices, reference))}), flush=True)
    print(json.dumps({f"{name}_median_seconds": statistics.median(values) for name, values in seconds.items()}))


if __name__ == "__main__":
    main()
