"""Training on several workers: the strategy ``TF_CONFIG`` asks for, and which worker writes what was trained.

A training service (Vertex AI, a Kubernetes TFJob, or a test starting processes on localhost) runs the same
program on every worker and tells each its place in ``TF_CONFIG``: ``{"cluster": {"chief": [...], "worker": [...]},
"task": {"type": "worker", "index": 0}}``. Every worker trains the same model in step
(``tf.distribute.MultiWorkerMirroredStrategy``, synchronous all-reduce), so the same code runs on one process or
many; only the chief's model is kept. TensorFlow's multi-worker guidance has every worker run the save (saving may
read variables through collective ops, which hang unless all workers take part) and the others write to a scratch
place that is then deleted.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tensorflow as tf

TF_CONFIG = "TF_CONFIG"
# The task types that train: "master" is the older name of the chief (AI Platform's), as TFX's own Trainer reads it.
CHIEF_TYPES = ("chief", "master")
TRAINING_TYPES = (*CHIEF_TYPES, "worker")


@dataclass(frozen=True)
class Worker:
    """This process's place in the training cluster: ``workers`` counts the tasks that train (chief and workers;
    an evaluator or a parameter server does not)."""

    workers: int = 1
    task_type: str = "chief"
    task_index: int = 0
    has_chief: bool = True

    @property
    def is_chief(self) -> bool:
        """The chief task; without one (a cluster of workers only, as TF allows), worker 0: the one that writes
        the model and the training summary."""
        if self.task_type in CHIEF_TYPES:
            return True
        return not self.has_chief and self.task_index == 0

    @property
    def several(self) -> bool:
        return self.workers > 1


def worker_of(tf_config: str | None) -> Worker:
    """This process's place, from the text of ``TF_CONFIG`` (None or empty: one process, which is the chief)."""
    if not tf_config:
        return Worker()
    config = json.loads(tf_config)
    cluster: Mapping[str, list] = config.get("cluster") or {}
    task = config.get("task") or {}
    workers = sum(len(cluster.get(kind) or ()) for kind in TRAINING_TYPES)
    if workers <= 1 and not task:
        return Worker()
    task_type, index = task.get("type", "chief"), int(task.get("index", 0))
    if task_type not in TRAINING_TYPES:
        # MultiWorkerMirroredStrategy has no parameter servers, and the Trainer no separate evaluator: such a task
        # would wait for a role it never gets.
        raise ValueError(f"{TF_CONFIG}: task type {task_type!r} does not train under MultiWorkerMirroredStrategy; "
                         f"the cluster may hold {', '.join(TRAINING_TYPES)}")
    has_chief = any(cluster.get(kind) for kind in CHIEF_TYPES)
    return Worker(workers=max(workers, 1), task_type=task_type, task_index=index, has_chief=has_chief)


def this_worker(environ: Mapping[str, str] | None = None) -> Worker:
    """This process's place, from the ``TF_CONFIG`` environment variable."""
    return worker_of((os.environ if environ is None else environ).get(TF_CONFIG))


def training_strategy(worker: Worker) -> tf.distribute.Strategy:
    """``MultiWorkerMirroredStrategy`` when several workers train, else the default strategy (one process: the
    same code path, nothing distributed). Call it before any other TensorFlow op of the process: the collective
    ops of several workers can only be set up while the runtime has not started. Several workers also mend Keras'
    ``fit`` for this strategy (:func:`mend_keras_fit`)."""
    import tensorflow as tf  # here: reading TF_CONFIG needs no TensorFlow

    if not worker.several:
        return tf.distribute.get_strategy()
    mend_keras_fit()
    return tf.distribute.MultiWorkerMirroredStrategy()


def mend_keras_fit() -> None:
    """Mend the two places where Keras 3.6's ``fit`` (pinned in constraints.txt) fails under
    MultiWorkerMirroredStrategy, whatever the model (keras-team/keras#20585); nothing changes under another
    strategy. Called once a process has several workers, so every model it fits (a network, the template ranker's
    filler) trains; a second call changes nothing.

    - ``fit`` builds the model on its first batch, which it first averages over the replicas (``strategy.reduce``
      on the whole nested batch, which this strategy refuses). The build only needs the shapes: it is built on this
      worker's own part of the batch, the shapes the average has, with no collective op.
    - Each step's logs (the loss, the metrics: scalars) are averaged over the workers along an axis 0 a scalar does
      not have: a scalar is averaged as it is."""
    import tensorflow as tf
    from keras.src import tree
    from keras.src.backend.tensorflow import trainer

    if getattr(trainer, "_mended_for_multi_worker", False):
        return
    build, reduce_per_replica = trainer.TensorFlowTrainer._maybe_symbolic_build, trainer.reduce_per_replica

    def local_build(self: Any, iterator: Any = None, data_batch: Any = None) -> None:
        strategy = self._distribute_strategy
        if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or iterator is None:
            return build(self, iterator, data_batch)
        for _, batches in iterator.enumerate_epoch():
            data_batch = tree.map_structure(lambda value: strategy.experimental_local_results(value)[0],
                                            next(batches))
            break
        return build(self, None, data_batch)

    def reduce_scalars(values: Any, strategy: Any, reduction: str) -> Any:
        if reduction in ("auto", "mean") and isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
            def mean(value: Any) -> Any:
                rank = strategy.experimental_local_results(value)[0].shape.rank
                return strategy.reduce("MEAN", value, axis=0 if rank else None)

            return tree.map_structure(mean, values)
        return reduce_per_replica(values, strategy, reduction)

    trainer.TensorFlowTrainer._maybe_symbolic_build = local_build
    trainer.reduce_per_replica = reduce_scalars
    trainer._mended_for_multi_worker = True


def scratch_dir(worker: Worker) -> str | None:
    """Where a non-chief writes its copy of the model and logs (a new local temporary directory, the caller removes
    it); None for the chief, which writes to the real places. Local rather than beside the real model: nobody reads
    the copy, and a worker killed while writing leaves nothing in the artifact store."""
    if worker.is_chief:
        return None
    return tempfile.mkdtemp(prefix=f"dialog-{worker.task_type}-{worker.task_index}-")


def localhost_cluster(workers: int) -> list[dict[str, Any]]:
    """The ``TF_CONFIG`` of each of a chief and ``workers`` - 1 workers on this machine, on free ports, as Vertex AI
    names its pools: for tests and benchmarks that start the processes themselves."""
    import socket

    sockets = [socket.socket() for _ in range(workers)]
    for sock in sockets:
        sock.bind(("localhost", 0))
    chief, *others = (f"localhost:{sock.getsockname()[1]}" for sock in sockets)
    for sock in sockets:
        sock.close()
    cluster = {"chief": [chief], "worker": others}
    return [{"cluster": cluster, "task": {"type": "chief", "index": 0}},
            *({"cluster": cluster, "task": {"type": "worker", "index": i}} for i in range(len(others)))]
