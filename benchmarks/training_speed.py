"""MemN2N training speed: seconds per epoch, and wall time until dev per-response accuracy reaches a target.

    .venv/bin/python benchmarks/training_speed.py --data corpora/restaurant --task 5 --match-type --target 93.4

Trains with `dialog train`'s defaults for the benchmark (Table 9's hops and size, Adam at 0.001) and prints one
JSON line: epochs run, mean seconds per epoch (dev evaluation excluded), the epoch and the cumulative training
seconds at which dev first reached the target (null if never).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from data.layout import discover
from models.training import TrainConfig, train


@click.command()
@click.option("--data", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--task", default=5, show_default=True)
@click.option("--match-type/--no-match-type", default=True, show_default=True)
@click.option("--epochs", default=12, show_default=True)
@click.option("--target", default=93.4, show_default=True, help="Dev per-response accuracy to reach (%).")
def main(data: Path, task: int, match_type: bool, epochs: int, target: float) -> None:
    config = TrainConfig.paper(task, match_type=match_type, learning_rate=0.001, epochs=epochs)
    summary = train(discover(data)[task], config)
    elapsed, reached = 0.0, None
    for epoch in summary["history"]:
        elapsed += epoch["seconds"]
        if reached is None and epoch["dev_per_response_accuracy"] >= target:
            reached = {"epoch": epoch["epoch"], "train_seconds": round(elapsed, 1)}
    click.echo(json.dumps({
        "task": task, "match_type": match_type, "epochs": len(summary["history"]),
        "seconds_per_epoch": round(elapsed / len(summary["history"]), 1), "target": target, "reached": reached,
        "best_dev": summary["dev_per_response_accuracy"], "train_examples": summary["train_examples"],
    }))


if __name__ == "__main__":
    main()
