"""`models.jobs`: independent calls in spawned worker processes, their results by index, their errors raised."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from models.jobs import WorkerDied, cores, in_workers


def test_results_come_back_by_index_whatever_the_order_started() -> None:
    results = dict(in_workers(pow, [(2, 3), (3, 2), (5, 1)], jobs=2, order=[2, 0, 1]))
    assert results == {0: 8, 1: 9, 2: 5}


def test_an_error_in_a_call_is_raised_in_the_parent() -> None:
    with pytest.raises(ValueError, match="invalid literal"):
        list(in_workers(int, [("12",), ("twelve",)], jobs=1))


def test_a_worker_that_dies_is_named() -> None:
    with pytest.raises(WorkerDied, match="fewer jobs"):
        list(in_workers(os._exit, [(3,)], jobs=1))


def test_each_worker_has_its_share_of_the_cores_as_tensorflow_threads() -> None:
    shares = dict(in_workers(os.getenv, [("TF_NUM_INTRAOP_THREADS",), ("TF_NUM_INTEROP_THREADS",)], jobs=2))
    assert shares == {0: str(max(1, cores() // 2)), 1: str(max(1, cores() // 2))}


def test_workers_log_through_the_parents_handlers(caplog) -> None:
    caplog.set_level(logging.WARNING)
    list(in_workers(logging.warning, [("from a worker %s", 0), ("from a worker %s", 1)], jobs=2))
    list(in_workers(logging.info, [("below the parent's level",)], jobs=1))
    assert sorted(record.getMessage() for record in caplog.records) == ["from a worker 0", "from a worker 1"]


# A parent of two workers, killed by the test at a point (argv[2]). "spawned": the workers are held in their start
# (re-importing this file, as a loaded machine holds them in their imports) until the parent is dead, so no
# initializer can run first; "unit": each worker in a long unit; "idle": each has ended a unit and waits for the next.
_PARENT = """
import os, sys, time
from pathlib import Path

folder, point = Path(sys.argv[1]), sys.argv[2]


def wait_for(condition, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def unit(index, seconds):
    Path(folder, f"unit-{index}").touch()
    wait_for(lambda: len(list(folder.glob("unit-*"))) == 2)  # the other unit is in the other worker
    time.sleep(seconds)


if __name__ == "__mp_main__" and point == "spawned":
    wait_for(Path(folder, "parent-killed").exists)

if __name__ == "__main__":
    from models.jobs import in_workers

    results = in_workers(unit, [(0, 0 if point == "idle" else 600), (1, 0 if point == "idle" else 600)], jobs=2)
    if point == "idle":
        next(results), next(results)  # the pool lives on: in_workers ends it after its last result
        Path(folder, "idle").touch()
        time.sleep(600)
    else:
        list(results)
"""


def _wait(condition: Callable[[], bool], seconds: float = 120.0) -> bool:
    """Whether ``condition`` holds within ``seconds`` (generous: a loaded machine takes seconds to start Python)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _workers(parent: int) -> list[psutil.Process]:
    """The pool's processes among ``parent``'s children (a spawned worker runs multiprocessing's spawn_main)."""
    workers = []
    for child in psutil.Process(parent).children():
        try:
            if any("spawn_main" in part for part in child.cmdline()):
                workers.append(child)
        except psutil.Error:  # ended, or still between fork and exec
            pass
    return workers


def _ended(process: psutil.Process) -> bool:
    """Whether ``process`` has ended: gone, or a zombie (the container's init may never reap it)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.skipif(sys.platform == "win32", reason="kills with SIGKILL")
@pytest.mark.parametrize("point", ["spawned", "unit", "idle"])
def test_no_worker_outlives_its_killed_parent(tmp_path: Path, point: str) -> None:
    """A killed `dialog benchmark --jobs 2` left its two workers training on for half an hour, and a worker whose
    parent was killed before the worker had started was found alive hours later, blocked on its call queue."""
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    root = str(Path(__file__).resolve().parents[2])
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path), point],
                              env={**os.environ, "PYTHONPATH": root})
    left: list[psutil.Process] = []
    try:
        ready = {"spawned": lambda: len(_workers(parent.pid)) == 2,
                 "unit": lambda: len(list(tmp_path.glob("unit-*"))) == 2,
                 "idle": (tmp_path / "idle").exists}[point]
        assert _wait(lambda: parent.poll() is not None or ready()), f"the parent never got to {point!r}"
        assert parent.poll() is None, f"the parent ended ({parent.returncode}) before it was killed"
        assert len(_workers(parent.pid)) == 2
        left = psutil.Process(parent.pid).children(recursive=True)  # the workers and multiprocessing's tracker
        parent.kill()
        parent.wait()
        (tmp_path / "parent-killed").touch()
        assert _wait(lambda: all(map(_ended, left))), \
            f"left running: {[p.pid for p in left if not _ended(p)]}"
    finally:
        parent.kill()
        parent.wait()
        for process in left:
            try:
                process.kill()
            except psutil.Error:  # ended (or its pid reused: psutil checks)
                pass
