"""Independent fits in worker processes: a table's (task, method) units side by side on a machine's cores.

The workers are spawned (TensorFlow's runtime does not survive a fork) and each starts with its share of the cores
as TensorFlow's thread pools and the parent's warning filters, before anything heavy is imported: this module
imports only the standard library, so a worker imports TensorFlow (if its calls need it) after both are set. A
worker's log records go to the parent's handlers (the logging cookbook's queue), so a command shows the same lines
whether its work ran in one process or in several. A worker whose parent is gone (killed, say) ends at once: an
orphan would go on training for minutes, on cores another run may be timing.
"""

from __future__ import annotations

import ctypes
import logging
import logging.handlers
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any


class WorkerDied(RuntimeError):
    """A worker process ended without its result (the system may have killed it for memory)."""


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


PR_SET_PDEATHSIG = 1  # linux/prctl.h: the signal this process gets when its parent dies


def _end_with_parent(parent: int, every: float = 1.0) -> None:
    """Ends this process once its parent is no longer ``parent`` (a worker's parent never changes but by dying)."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _killed_with_parent() -> bool:
    """Asks Linux to SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``); whether it could.

    The kernel's signal reaches a worker however busy it is (a unit in TensorFlow's C++, say) and needs no thread.
    It fires when the *thread* that spawned the worker ends, not only the process: the pool spawns its workers
    on ``submit``, so in the thread that first advances :func:`in_workers`, which submits every call before its
    first result. A caller that let that thread end while the generator still ran (resuming it in another) would
    have its workers killed: the pool breaks and raises :class:`WorkerDied`, an error, never an orphan; the
    callers (the CLI, :mod:`models.babi.reproduce`) consume it in the thread that starts it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library this interpreter is linked with
        return libc.prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                          ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):  # no C library to load, or one without prctl
        return False


def _start_worker(parent: int, threads: int, filters: list, records: Any, level: int) -> None:
    """A worker's start, before any call: its end with its parent (``parent``, the pool's process), the parent's
    warning filters and log level, and its TensorFlow threads, set before the runtime starts. These small models
    keep a thread busy only part of a step, so jobs of their own share of the cores get more done than one process
    of every core, and jobs that each take every core wait on one another (docs/results.md has the figures).

    The parent's pid comes from the parent, not ``os.getppid()`` here: on a loaded machine a spawned worker takes
    seconds to get here, and a parent killed meanwhile leaves it a child of init (or a subreaper), which it would
    watch for ever while blocking on its call queue (a pipe it holds both ends of, so never at its end). The death
    signal is asked for first and the parent checked after it, as prctl(2) advises: a parent that died before the
    request sends no signal. Where there is no such signal, a thread polls the parent instead."""
    pdeathsig = _killed_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    if not pdeathsig:
        threading.Thread(target=_end_with_parent, args=(parent,), daemon=True, name="end-with-parent").start()
    warnings.filters[:] = filters  # the command's own (dialog --verbose shows the frameworks' warnings; else none)
    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(records)]
    root.setLevel(level)
    # read by TensorFlow's runtime when it makes its thread pools (tf.config.threading's calls need it imported)
    os.environ["TF_NUM_INTRAOP_THREADS"] = os.environ["TF_NUM_INTEROP_THREADS"] = str(threads)


def in_workers(function: Callable[..., Any], calls: Sequence[tuple], jobs: int, order: Sequence[int] | None = None
               ) -> Iterator[tuple[int, Any]]:
    """``function(*call)`` for each of ``calls`` in ``jobs`` worker processes, started in ``order`` (default: as
    given; longest first keeps the last to end short), yielded as (index into ``calls``, result) as each ends.
    ``function`` and the calls must pickle (``function`` a module's own, by name). An error in a call is raised
    here, and the calls not started are cancelled; a worker that dies raises :class:`WorkerDied`."""
    order = range(len(calls)) if order is None else order
    context = multiprocessing.get_context("spawn")
    root = logging.getLogger()
    records = context.Queue()
    listener = logging.handlers.QueueListener(records, *root.handlers, respect_handler_level=True)
    listener.start()
    start = (os.getpid(), max(1, cores() // jobs), list(warnings.filters), records, root.getEffectiveLevel())
    try:
        with ProcessPoolExecutor(jobs, context, _start_worker, start) as pool:
            running = {pool.submit(function, *calls[index]): index for index in order}
            try:
                for future in as_completed(running):
                    yield running[future], future.result()
            except BrokenProcessPool:
                raise WorkerDied(f"a worker process of the {jobs} jobs died (killed for memory?); run again with "
                                 "fewer jobs") from None
            finally:
                pool.shutdown(cancel_futures=True)
    finally:
        listener.stop()
