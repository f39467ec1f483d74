"""The DialogTrainer as a Vertex AI custom job on a pool of workers (``kubeflow_v2_runner --workers --accelerator``).

TFX's Google Cloud AI Platform Trainer (``tfx.extensions.google_cloud_ai_platform``) starts a custom job whose
replicas run ``python -m tfx.scripts.run_executor --executor_class_path X`` with the Trainer's inputs, outputs and
properties; X is what its executor's ``_GetExecutorClass`` names, TFX's plain Trainer executor. Ours names the
Trainers' own (``components.trainer_base``: it adds the Examples URI that ``run_fn`` reads the corpus resources
from), so the remote replicas run the same ``run_fn`` as a local Trainer. Vertex AI sets ``TF_CONFIG`` on each
replica (worker pool 0 is the ``chief``, pool 1 the ``worker`` tasks), which ``run_fn`` reads
(``models.distribute``).

This module imports the extension (and the Vertex AI client, seconds of imports): only a pipeline compiled for
Vertex training needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfx.dsl.components.base import executor_spec
from tfx.extensions.google_cloud_ai_platform import constants
from tfx.extensions.google_cloud_ai_platform.trainer import executor as cloud_trainer_executor

from components import trainer_base


class VertexExecutor(cloud_trainer_executor.GenericExecutor):
    """Starts the Vertex AI job (in the pipeline's step) whose replicas run the DialogTrainer's executor."""

    def _GetExecutorClass(self) -> type:  # noqa: N802 (TFX API)
        return trainer_base.Executor


@dataclass(frozen=True)
class VertexTraining:
    """Where and on what the Trainers run: a Vertex AI custom job in ``project`` and ``region``, its replicas
    running ``image`` (this repository installed, as for the pipeline) on ``machine_type``, each with
    ``accelerator_count`` accelerators of ``accelerator_type`` when one is named (e.g. ``NVIDIA_TESLA_T4``).
    ``workers`` replicas train together: pool 0 holds the chief, pool 1 the other ``workers - 1``."""

    project: str
    region: str
    image: str
    workers: int = 1
    machine_type: str = "n1-standard-4"
    accelerator_type: str | None = None
    accelerator_count: int = 0

    def __post_init__(self) -> None:
        """Refuse a job that cannot run before the pipeline is compiled, naming the setting."""
        for name in ("project", "region", "image", "machine_type"):
            if not getattr(self, name):
                raise ValueError(f"Vertex training needs a {name}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be a whole number >= 1, got {self.workers!r}")
        if self.accelerator_type and (isinstance(self.accelerator_count, bool)
                                      or not isinstance(self.accelerator_count, int) or self.accelerator_count < 1):
            raise ValueError(f"accelerator {self.accelerator_type} needs a count >= 1, got {self.accelerator_count!r}")
        if not self.accelerator_type and self.accelerator_count:
            raise ValueError(f"{self.accelerator_count} accelerators of no type: name the type")

    def worker_pool_specs(self) -> list[dict[str, Any]]:
        """The job's worker pools (Vertex AI's CustomJobSpec): the chief, then the other workers if any."""
        machine: dict[str, Any] = {"machine_type": self.machine_type}
        if self.accelerator_type:
            machine |= {"accelerator_type": self.accelerator_type, "accelerator_count": self.accelerator_count}

        def pool(replicas: int) -> dict[str, Any]:
            # TFX sets the container's command (run_executor); the image is ours, with this repository in it.
            return {"machine_spec": dict(machine), "replica_count": replicas,
                    "container_spec": {"image_uri": self.image}}

        return [pool(1)] + ([pool(self.workers - 1)] if self.workers > 1 else [])

    def custom_config(self) -> dict[str, Any]:
        """The Trainer's ``custom_config`` entries that send it to Vertex AI (``run_fn`` drops them again)."""
        return {constants.ENABLE_VERTEX_KEY: True, constants.VERTEX_REGION_KEY: self.region,
                cloud_trainer_executor.TRAINING_ARGS_KEY: {
                    "project": self.project, "job_spec": {"worker_pool_specs": self.worker_pool_specs()}}}

    def executor_spec(self) -> executor_spec.ExecutorClassSpec:
        return executor_spec.ExecutorClassSpec(VertexExecutor)


def parse_accelerator(text: str) -> tuple[str, int]:
    """``TYPE:COUNT`` (``NVIDIA_TESLA_T4:1``; ``TYPE`` alone is one) as the type and the count."""
    kind, _, count = text.partition(":")
    if not kind or not (count or "1").isdigit() or int(count or "1") < 1:
        raise ValueError(f"accelerator must be TYPE:COUNT with a count >= 1, e.g. NVIDIA_TESLA_T4:1, got {text!r}")
    return kind, int(count or "1")
