"""A MemN2N training step's cost: its fixed part (whatever the batch) and its part per example, one JSON line each.

    .venv/bin/python benchmarks/memn2n_step.py --data DIR [--task 5] [--batches 8,32,128] [--steps 100] [--rounds 5]

Table 2's MemN2N + match type recipe (models.babi.methods: unseen words at zero, a gradient row per word
occurrence) on ``DIR``'s task: the same model trained twice side by side in one process, once with Keras' loop (a
step per call of the compiled function) and once with the project's (``models.training.loop_training_steps``,
``STEPS_PER_CALL`` steps a call). The two take turns, an epoch of ``--steps`` batches each, ``--rounds`` times at
each batch size, so a host whose pace drifts slows both alike. A step's milliseconds are the median of its rounds;
the fixed part and the part per example are the least-squares line through the batch sizes (two or more). Each
epoch's seconds include ``fit``'s own set-up, spread over its steps: the same in both loops.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import click
import numpy as np

REPOSITORY = Path(__file__).resolve().parent.parent


@click.command()
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="A corpus in the dialog-bAbI layout (the public tasks 1-5 trn/dev, or a generated one).")
@click.option("--task", type=int, default=5, show_default=True)
@click.option("--batches", default="8,32,128", show_default=True, help="Comma-separated batch sizes.")
@click.option("--steps", type=int, default=100, show_default=True, help="Training steps an epoch.")
@click.option("--rounds", type=int, default=5, show_default=True, help="Epochs timed per loop and batch size.")
def main(data: Path, task: int, batches: str, steps: int, rounds: int) -> None:
    sizes = [int(size) for size in batches.split(",")]
    if len(set(sizes)) < 2:
        raise click.BadParameter("two batch sizes or more: the fixed part is where their line meets 0",
                                 param_hint="--batches")
    sys.path.insert(0, str(REPOSITORY))
    import keras

    from data.layout import discover
    from models import training
    from models.babi.presets import paper_config
    from models.examples import TaskData
    from models.features import Featurizer, build_spec

    loaded = TaskData.load(discover(data)[task], splits=("trn", "dev"))
    trn = loaded.split("trn")
    config = paper_config(task, match_type=True, only_learned_words=True, per_occurrence_gradient=True)
    spec = build_spec(loaded, memory_size=training.memory_size_for(config, trn))
    features = training.featurize(Featurizer(spec), trn)
    labels = training.answer_indices(spec, trn)
    loops = {"keras": 1, "graph_loop": training.STEPS_PER_CALL}
    models = {}
    for name, per_call in loops.items():
        keras.utils.set_random_seed(0)
        model = training.compiled_model(spec, config, features, labels)
        inputs = training.with_constant_inputs(model, features)
        training.loop_training_steps(model, inputs, per_call)
        models[name] = (model, inputs)
    medians: dict[str, list[float]] = {name: [] for name in loops}
    for size in sizes:
        count = size * steps
        if count > len(labels):
            raise click.BadParameter(f"{steps} steps of {size} need {count} examples; the task has {len(labels)}",
                                     param_hint="--steps")
        seconds: dict[str, list[float]] = {name: [] for name in loops}
        datasets = {name: training.training_batches({key: value[:count] for key, value in inputs.items()},
                                                    labels[:count], size) for name, (_, inputs) in models.items()}
        for name, (model, _) in models.items():
            model.fit(datasets[name], epochs=1, verbose=0)  # traces this batch shape
        for _ in range(rounds):
            for name, (model, _) in models.items():
                started = time.perf_counter()
                model.fit(datasets[name], epochs=1, verbose=0)
                seconds[name].append(time.perf_counter() - started)
        for name in loops:
            step = 1000 * statistics.median(seconds[name]) / steps
            medians[name].append(step)
            print(json.dumps({"loop": name, "steps_per_call": loops[name], "batch": size, "ms_per_step": round(step, 3),
                              "rounds_ms": [round(1000 * s / steps, 3) for s in seconds[name]]}), flush=True)
    for name in loops:
        per_example, fixed = np.polyfit(sizes, medians[name], 1)
        print(json.dumps({"loop": name, "steps_per_call": loops[name], "task": task, "data": str(data),
                          "fixed_ms": round(float(fixed), 3), "ms_per_example": round(float(per_example), 4)}),
              flush=True)


if __name__ == "__main__":
    main()
