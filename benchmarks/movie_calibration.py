"""The Movie Dialog world's calibration: the paper's non-learning baselines (QA system on task 1, SVD on task 2,
IR on task 4) on a corpus generated with given knobs, scored on dev (knobs are chosen on dev; test is reported by
``dialog benchmark``). Prints one JSON line per run.

    python benchmarks/movie_calibration.py --scale paper --train-share 0.2 --calibration qa_distractor=0.2 ...

``--train-share`` renders that share of each task's training examples (a faster sweep; the world and dev are the
scale's own). Compare: the paper's QA system 90.7 hits@1, SVD 19.2 hits@100, IR 23.7 hits@10.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from data.movie import tasks as movie_tasks
from data.movie.reader import discover_movie_corpus
from data.movie.world import Calibration
from models.methods import Settings
from models.movie.examples import MovieData
from models.movie.methods import MovieTask, hits, ir, qa, svd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="paper", choices=sorted(movie_tasks.SIZES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-share", type=float, default=1.0)
    parser.add_argument("--calibration", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--split", default="dev", choices=("dev", "test"))
    args = parser.parse_args()
    calibration = Calibration.parse(args.calibration)
    sizes = movie_tasks.SIZES[args.scale]
    if args.train_share != 1.0:  # this process renders fewer training examples; the world is the scale's
        movie_tasks.SIZES[args.scale] = {key: (max(1, round(value[0] * args.train_share)), *value[1:])
                                         if isinstance(value, tuple) else value for key, value in sizes.items()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "movies"
        movie_tasks.generate(movie_tasks.MoviePlan(args.seed, args.scale, calibration), out, runner="local")
        generated = time.perf_counter() - started
        data = MovieData(discover_movie_corpus(out))
        figures = {}
        for name, method, task in (("qa_system", qa, 1), ("svd", svd, 2), ("ir", ir, 4)):
            fitted = method(MovieTask(data, (task,)), Path(directory), Settings())
            figures[name] = hits(fitted.ranker, data, task, args.split)[0]
    print(json.dumps({"benchmark": "movie_calibration", "scale": args.scale, "seed": args.seed,
                      "train_share": args.train_share, "split": args.split, "calibration": asdict(calibration),
                      **figures, "paper": {"qa_system": 90.7, "svd": 19.2, "ir": 23.7},
                      "generate_seconds": round(generated, 1),
                      "seconds": round(time.perf_counter() - started, 1),
                      "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}))


if __name__ == "__main__":
    main()
