"""Where the state ranker's time goes, per example: its facts (parsed once per example in training), the scorer's
inputs from them, the candidates' features included (in every step and every scoring), the whole scorer, the act
mask (computed once per development example in training), and a training step (forward, gradients, Adam), at a few
batch sizes, on ``dev-OOP`` of a banking corpus. One JSON line per batch size; the weights are the initial ones (the
cost does not depend on them). No test file is read.

    .venv/bin/python benchmarks/state_ranker_speed.py --data corpora/banking [--examples 2048] [--batch 32 --batch 64]
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import keras
import tensorflow as tf

from data.banking.labels import DEV_CHALLENGES
from data.layout import BANKING_TASK, discover
from models.banking.state_ranker import (
    VALUE_PATTERNS,
    StateConfig,
    allowed_at,
    build_state_ranker,
    cached_facts,
    scorer_inputs,
    training_step,
)
from models.examples import TaskData


def _per_example(function: tf.types.experimental.PolymorphicFunction, batches: list[dict[str, tf.Tensor]],
                 examples: int) -> float:
    """Milliseconds per example over every batch, after one call that traces."""
    function(batches[0])
    started = time.perf_counter()
    for batch in batches:
        function(batch)
    return round(1000.0 * (time.perf_counter() - started) / examples, 3)


@click.command()
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option("--examples", type=int, default=2048, show_default=True)
@click.option("--batch", "batches", type=int, multiple=True, default=(32, 64, 256), show_default=True)
def main(data: Path, examples: int, batches: tuple[int, ...]) -> None:
    task = TaskData.load(discover(data)[BANKING_TASK], splits=["trn", DEV_CHALLENGES])
    candidates = list(task.candidates)
    _, _, features, scorer = build_state_ranker(task.split("trn"), candidates, StateConfig())
    chosen = task.split(DEV_CHALLENGES)[:examples]
    started = time.perf_counter()
    facts = cached_facts(features, chosen)
    facts_ms = round(1000.0 * (time.perf_counter() - started) / len(chosen), 3)

    @tf.function(autograph=False)
    def inputs(batch: dict[str, tf.Tensor]) -> tf.Tensor:
        return tf.add_n([tf.reduce_sum(tf.cast(value, tf.float32))
                         for value in scorer_inputs(features, batch).values()])

    @tf.function(autograph=False)
    def score(batch: dict[str, tf.Tensor]) -> tf.Tensor:
        return tf.reduce_sum(scorer(scorer_inputs(features, batch)))

    allowed = tf.ones([features.situations, len(features.acts) * VALUE_PATTERNS], tf.bool)

    @tf.function(autograph=False)
    def mask(batch: dict[str, tf.Tensor]) -> tf.Tensor:
        return tf.reduce_sum(tf.cast(allowed_at(features, allowed, batch), tf.int32))

    train = training_step(features, scorer, keras.optimizers.Adam(0.001, clipnorm=40.0))

    @tf.function(autograph=False)
    def step(batch: dict[str, tf.Tensor]) -> tf.Tensor:  # every answer the first candidate: the cost is the same
        return train(batch, tf.zeros(tf.shape(batch["last_line"])[:1], tf.int32))

    for size in batches:
        parts = [{key: tf.constant(value[start:start + size]) for key, value in facts.items()}
                 for start in range(0, len(chosen), size)]
        print(json.dumps({"batch": size, "examples": len(chosen), "candidates": len(candidates),
                          "facts_ms_per_example": facts_ms,
                          "inputs_ms_per_example": _per_example(inputs, parts, len(chosen)),
                          "scorer_ms_per_example": _per_example(score, parts, len(chosen)),
                          "mask_ms_per_example": _per_example(mask, parts, len(chosen)),
                          "step_ms_per_example": _per_example(step, parts, len(chosen))}), flush=True)


if __name__ == "__main__":
    main()
