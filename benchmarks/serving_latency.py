"""Serving latency of one turn through an exported model's ``serving_default`` signature.

    .venv/bin/python benchmarks/serving_latency.py --model M --data DIR --task 5 [--turns 1000] [--batch 1]

M is a SavedModel or a pushed model's base directory (``pipeline_output/serving_model/memn2n``: its newest
version). Each request is one bot turn, the TF Serving REST body ``{"instances": [{"memory": [...], "query":
...}]}`` answered through ``models.serving.rest.predict`` (validation, tensors, signature, JSON-ready
response); the first 20 requests warm up and are not counted. Prints median, p90, p99 and max in ms.

With ``--batch N`` each request holds N consecutive turns (histories padded with "" to the longest, as the README
asks of a request's rows), the regime of an Evaluator or a batch scorer rather than a chat: the figures are per
request, and ``median_ms_per_turn`` divides the median by N.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np

from data.layout import discover
from models.examples import split_examples
from models.serving.ranker import load_model
from models.serving.rest import predict

WARM_UP = 20


@click.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--data", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--task", required=True, type=int)
@click.option("--split", default="tst", show_default=True)
@click.option("--turns", default=1000, show_default=True, help="Turns timed (after the warm-up requests).")
@click.option("--batch", default=1, show_default=True, type=click.IntRange(min=1), help="Turns per request.")
def main(model_dir: Path, data: Path, task: int, split: str, turns: int, batch: int) -> None:
    serve = load_model(model_dir)[1].signatures["serving_default"]
    examples = split_examples(discover(data)[task], split)[: turns + WARM_UP * batch]
    groups = [examples[start:start + batch] for start in range(0, len(examples), batch)]
    requests = [json.dumps({"instances": [{"memory": list(e.memory) + [""] * (max(len(g.memory) for g in group)
                                                                            - len(e.memory)), "query": e.query}
                                          for e in group]}) for group in groups]
    latencies = []
    for i, body in enumerate(requests):
        started = time.perf_counter()
        predict(serve, json.loads(body))
        if i >= WARM_UP:
            latencies.append((time.perf_counter() - started) * 1000)
    ms = np.array(latencies)
    click.echo(json.dumps({"turns": sum(len(group) for group in groups[WARM_UP:]), "batch": batch,
                           "median_ms": round(float(np.median(ms)), 2),
                           "median_ms_per_turn": round(float(np.median(ms)) / batch, 3),
                           "p90_ms": round(float(np.percentile(ms, 90)), 2),
                           "p99_ms": round(float(np.percentile(ms, 99)), 2), "max_ms": round(float(ms.max()), 2),
                           "mean_memory": round(float(np.mean([len(e.memory) for e in examples])), 1)}))


if __name__ == "__main__":
    main()
