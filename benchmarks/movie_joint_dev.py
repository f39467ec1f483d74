"""The streamed joint MemN2N (the Movie Dialog pipeline's product) on the development exchanges only: trained on
every task's ``train`` file with the given ``StreamedConfig`` overrides, each epoch's dev hits@k per task (the
paper's k) printed as one JSON line per configuration. No test file is read: this is what the joint model's
settings (its task balance, its epochs) are chosen on; ``dialog benchmark --streamed`` then reports test.

    .venv/bin/python benchmarks/movie_joint_dev.py --data PAPER_DIR --records DIR \
        --config '{"task_sampling": 0.0}' [--config ...]

``--records`` keeps the tf.Example files written from the corpus between runs (written once: task by task in
this process, slower than the pipeline's ExampleGen); ``--config`` is a JSON object of ``StreamedConfig`` fields over
the pipeline's joint MemN2N (repeatable; default: the joint MemN2N as shipped). ``--export DIR`` keeps each
configuration's SavedModel as ``DIR/config-N`` (N from 0, in the order given), so that the one dev chose is reported
on test without training it again:

    .venv/bin/python benchmarks/movie_joint_dev.py --data PAPER_DIR --test-of DIR/config-N

which ranks each task's test exchanges through that SavedModel (hits@k, the paper's k), one JSON line.
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import replace
from pathlib import Path

import click

from data.movie.reader import discover_movie_corpus
from models.movie.examples import MovieData
from models.movie.methods import hits, learned_tasks
from models.movie.records import movie_candidates
from models.movie.streamed import STREAMED_JOINT_MEMN2N, train_streamed
from models.movie.streamed_fit import StreamedRanker, write_split


@click.command()
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option("--records", type=click.Path(file_okay=False, path_type=Path),
              help="Where the tf.Example files of train and dev are written once and found again.")
@click.option("--config", "configs", multiple=True, default=("{}",), show_default=True)
@click.option("--export", type=click.Path(file_okay=False, path_type=Path),
              help="Keep each configuration's SavedModel here, as config-N.")
@click.option("--test-of", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Rank test through this exported model instead of training.")
def main(data: Path, records: Path | None, configs: tuple[str, ...], export: Path | None,
         test_of: Path | None) -> None:
    movie = MovieData(discover_movie_corpus(data))
    tasks = tuple(learned_tasks(movie.corpus))
    candidates = movie_candidates(movie.corpus, movie.entities)
    if test_of is not None:
        ranker = StreamedRanker(test_of, movie.entities, candidates)
        print(json.dumps({"benchmark": "movie_joint_test", "model": str(test_of),
                          "test_hits": {task: round(hits(ranker, movie, task, "test")[0], 2) for task in tasks}}))
        return
    if records is None:
        raise click.UsageError("--records is needed to train")
    started = time.perf_counter()
    train = write_split(movie, tasks, "train", candidates, records)
    dev = write_split(movie, tasks, "dev", candidates, records)
    written = time.perf_counter() - started
    triples = [(t.subject, t.relation, t.value) for t in movie.triples]
    for number, text in enumerate(configs):
        overrides = json.loads(text)
        config = replace(STREAMED_JOINT_MEMN2N, **overrides)
        started = time.perf_counter()
        out = str(export / f"config-{number}") if export is not None else None
        summary = train_streamed(movie.entities, triples, candidates, train, dev, config, out=out)
        print(json.dumps({"benchmark": "movie_joint_dev", "config": overrides, "model": out,
                          "records_seconds": round(written, 1),
                          "seconds": round(time.perf_counter() - started, 1),
                          "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
                          **{key: summary[key] for key in ("task_rates", "epoch_exchanges", "best_epoch",
                                                           "dev_mean_hits", "dev_hits", "history")}}),
              flush=True)
        written = 0.0


if __name__ == "__main__":
    main()
