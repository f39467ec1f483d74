"""Settings of the whole suite: how two pytest-xdist workers share two cores."""

from __future__ import annotations

import os

import pytest

# One TensorFlow thread pool of one thread per worker: two workers with a pool each as wide as the machine
# oversubscribe the two cores (set before any test file imports TensorFlow).
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The files that take longest (the suite's --durations, summed by file), longest first. The two xdist workers take
# whole files (--dist loadfile), the next one as a worker runs out, in the order collected (the Makefile turns off
# xdist's own reordering, by number of tests, which put files of one or two long tests last); started last, a long
# file keeps one worker busy while the other has nothing left, so these are collected first.
LONG_FIRST = (
    "tests/pipeline/test_pipeline.py",
    "tests/pipeline/test_movie_pipeline.py",
    "tests/models/babi/template/test_ranker.py",
    "tests/models/banking/test_reproduce.py",
    "tests/models/serving/test_serving.py",
    "tests/models/movie/test_reproduce.py",
    "tests/test_train_per_paper.py",
    "tests/models/babi/template/test_hcn.py",
    "tests/models/babi/test_reproduce.py",
    "tests/models/test_multi_worker.py",
    "tests/test_cli.py",
    "tests/test_fourth_paper.py",
    "tests/models/test_distributed.py",
    "tests/components/test_atomic_pusher.py",
    "tests/models/banking/test_state_ranker.py",
    "tests/models/test_memn2n.py",
    "tests/models/test_training.py",
    "tests/test_packaging.py",
)


def pytest_collection_modifyitems(config: object, items: list) -> None:
    """The long files first (:data:`LONG_FIRST`), the rest in the order collected."""
    rank = {path: index for index, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def pytest_configure(config: pytest.Config) -> None:
    """Each process that runs tests (an xdist worker, or pytest alone) compiles its graphs without TensorFlow's
    graph optimiser (grappler). A test traces many small graphs and runs each a few times, so the optimiser's passes
    cost more than they save: two of the heaviest files took about a fifth longer with them, run alone (docs/results.md
    has the figures, and the whole suite's, where the gain is within its noise). Nothing a test asserts depends on
    them, and what runs in a process of its own (the pipeline and CLI commands that tests start, the multi-worker
    trainers) keeps them, as `make run` and the benchmarks do."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # xdist's controller runs no test: it need not import TensorFlow
    import tensorflow as tf

    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
