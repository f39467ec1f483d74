"""The Movie Dialog Trainer on two local workers against one process: dev hits and wall time, one JSON line each.

    .venv/bin/python benchmarks/movie_multi_worker.py [--scale tiny] [--epochs 4]

A Movie Dialog corpus is generated and written as MovieExampleGen writes it (gzipped tf.Examples and the resources)
by a first child process; then the Trainer's executor runs (as a Vertex AI job's replicas run it) once alone and
once as a chief and a worker on localhost, each told its place by ``TF_CONFIG``. Every child starts TensorFlow
afresh: several workers' collective ops must be set up before any other TensorFlow op of the process.
"""

from __future__ import annotations

import json
import os
import posixpath
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import click

REPOSITORY = Path(__file__).resolve().parent.parent
CONFIG = {"batch_size": 32, "sampled": 200, "shuffle_buffer": 1000, "embedding_dim": 32, "patience": None}


def prepare(corpus_dir: str, examples_dir: str, scale: str) -> None:
    """Generate the corpus and write its train and dev exchanges as the ExampleGen does."""
    import tensorflow as tf

    from components.movie_example_gen import _corpus, write_movie_resources
    from data.movie.tasks import MoviePlan, generate
    from models.movie.examples import MovieData
    from models.movie.records import Parser, movie_candidates, movie_tf_examples

    generate(MoviePlan(seed=3, scale=scale), corpus_dir)
    corpus = _corpus(corpus_dir)
    data, candidates = MovieData(corpus), movie_candidates(corpus)
    indices, parser = candidates.indices(), Parser(data.entities)
    for tfx_split, split in (("train", "train"), ("eval", "dev")):
        tf.io.gfile.makedirs(posixpath.join(examples_dir, f"Split-{tfx_split}"))
        with tf.io.TFRecordWriter(posixpath.join(examples_dir, f"Split-{tfx_split}", "data.gz"), "GZIP") as writer:
            for task in (1, 2, 3, 4):
                for example in movie_tf_examples(data.examples(task, split), candidates, indices, parser):
                    writer.write(example.SerializeToString())
    write_movie_resources(examples_dir, corpus)


def train(examples_dir: str, artifacts_dir: str, epochs: int) -> None:
    """Run the Trainer's executor on the prepared examples (no TensorFlow op before it: it sets up the strategy)."""
    from tfx.proto import trainer_pb2
    from tfx.types import artifact_utils, standard_artifacts
    from tfx.utils import proto_utils

    from components.trainer_base import Executor
    from models.movie.streamed import StreamedConfig

    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = examples_dir, artifact_utils.encode_split_names(["train", "eval"])
    model, run = standard_artifacts.Model(), standard_artifacts.ModelRun()
    model.uri, run.uri = posixpath.join(artifacts_dir, "model"), posixpath.join(artifacts_dir, "model_run")
    config = asdict(replace(StreamedConfig(), epochs=epochs, **CONFIG))
    Executor().Do({"examples": [examples]}, {"model": [model], "model_run": [run]}, {
        "train_args": proto_utils.proto_to_json(trainer_pb2.TrainArgs(splits=["train"])),
        "eval_args": proto_utils.proto_to_json(trainer_pb2.EvalArgs(splits=["eval"])),
        "run_fn": "components.movie_trainer.run_fn", "custom_config": json.dumps(config)})


def child(*args: str, tf_config: dict | None = None) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["PYTHONPATH"] = str(REPOSITORY)
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
    return subprocess.Popen([sys.executable, __file__, *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def finish(*processes: subprocess.Popen) -> None:
    for process in processes:
        _, err = process.communicate()
        if process.returncode:
            raise click.ClickException(err.decode(errors="replace")[-3000:])


@click.command()
@click.option("--scale", default="tiny", show_default=True)
@click.option("--epochs", default=4, show_default=True)
@click.option("--child-mode", type=click.Choice(["prepare", "train"]), default=None, hidden=True)
@click.argument("paths", nargs=-1)
def main(scale: str, epochs: int, child_mode: str | None, paths: tuple[str, ...]) -> None:
    if child_mode == "prepare":
        return prepare(*paths, scale)
    if child_mode == "train":
        return train(*paths, epochs)
    from models.distribute import localhost_cluster  # no TensorFlow in this parent process

    with tempfile.TemporaryDirectory() as work:
        corpus, examples = posixpath.join(work, "corpus"), posixpath.join(work, "examples")
        finish(child("--child-mode", "prepare", "--scale", scale, corpus, examples))
        runs = {"one process": {}}
        chief, worker = localhost_cluster(2)
        runs["two workers"] = {"chief": chief, "worker": worker}
        for name, configs in runs.items():
            artifacts = posixpath.join(work, name.replace(" ", "-"))
            started = time.perf_counter()
            finish(*[child("--child-mode", "train", "--epochs", str(epochs), examples, artifacts, tf_config=c)
                     for c in configs.values()] if configs else
                   [child("--child-mode", "train", "--epochs", str(epochs), examples, artifacts)])
            summary = json.loads(Path(artifacts, "model_run", "training_summary.json").read_text())
            print(json.dumps({"run": name, "seconds": round(time.perf_counter() - started, 1), "scale": scale,
                              "replicas": summary["replicas"], "best_epoch": summary["best_epoch"],
                              "dev_hits": summary["dev_hits"], "dev_mean_hits": summary["dev_mean_hits"]}),
                  flush=True)
    return None


if __name__ == "__main__":
    main()
