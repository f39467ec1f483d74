"""`models.jobs`: independent calls in spawned worker processes, their results by index, their errors raised."""

from __future__ import annotations

import logging
import os

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


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return [int(child) for child in handle.read().split()]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads the process tree from /proc (Linux)")
def test_a_worker_ends_when_its_parent_is_killed(tmp_path) -> None:
    """A killed `dialog benchmark --jobs 2` left its two workers training on for half an hour."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    script.write_text("import time\nfrom models.jobs import in_workers\n"
                      "if __name__ == '__main__':\n    list(in_workers(time.sleep, [(120,)], jobs=1))\n")
    parent = subprocess.Popen([sys.executable, str(script)], env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        deadline, workers = time.monotonic() + 60, []
        while not workers and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [child for child in _children(parent.pid)
                       if b"spawn_main" in open(f"/proc/{child}/cmdline", "rb").read()]
        assert workers, "no worker started"
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while any(map(_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_running, workers))
    finally:
        parent.kill()
