"""Run the `dialog` pipeline locally: LocalDagRunner, SQLite metadata, Beam DirectRunner.

``python pipeline/local_runner.py`` (what ``tfx pipeline create/run create --engine local`` executes) reads its
settings from the environment: DIALOG_PIPELINE_ROOT (default ./pipeline_output), DIALOG_DATA (default
./corpora/restaurant), DIALOG_PROFILE (quick|full, default quick), DIALOG_TASKS (e.g. 1,2,3; default all tasks of
the corpus that share its candidate set) and DIALOG_BEAM_ARGS (space-separated Beam options). ``dialog pipeline``
calls :func:`run` with the same settings as flags.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file (tfx CLI): make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.orchestration import metadata  # noqa: E402
from tfx.orchestration.local.local_dag_runner import LocalDagRunner  # noqa: E402

from data.layout import parse_tasks  # noqa: E402
from models.papers import Profile  # noqa: E402
from pipeline.configs import (  # noqa: E402
    DEFAULT_DATA,
    DEFAULT_ROOT,
    LOCAL_SETUP_FILE,
    PIPELINE_NAME,
    with_code_shipped,
)
from pipeline.metadata_check import check_metadata  # noqa: E402
from pipeline.pipeline import create_pipeline  # noqa: E402

# In-memory DirectRunner: on this 2-core machine it beat multi-processing for the whole pipeline (measured).
DEFAULT_BEAM_ARGS = ("--direct_running_mode=in_memory", "--direct_num_workers=1")


def paths(root: Path) -> dict[str, Path]:
    return {"pipeline_root": root / "pipelines" / PIPELINE_NAME, "metadata": root / "metadata" / "metadata.db",
            "serving_model_dir": root / "serving_model"}


def run(root: Path = DEFAULT_ROOT, data: Path = DEFAULT_DATA, profile: str | Profile = "quick",
        tasks: Sequence[int] = (), beam_args: Sequence[str] = DEFAULT_BEAM_ARGS,
        paper: str | None = None) -> dict[str, Path]:
    """Run the pipeline of ``data``'s paper (``paper``, or looked up from the corpus) with ``profile`` (one of the
    paper's by name, or a profile); where the run's artifacts, metadata and pushed models are."""
    located = paths(Path(root).resolve())
    check_metadata(located["metadata"])  # a damaged store: one line naming it, before TFX opens it to write
    located["metadata"].parent.mkdir(parents=True, exist_ok=True)
    LocalDagRunner().run(create_pipeline(
        pipeline_root=str(located["pipeline_root"]), data_root=str(Path(data).resolve()),
        serving_model_dir=str(located["serving_model_dir"]),
        profile=profile, tasks=tasks, paper=paper,
        metadata_connection_config=metadata.sqlite_metadata_connection_config(str(located["metadata"])),
        beam_pipeline_args=with_code_shipped(beam_args, LOCAL_SETUP_FILE if LOCAL_SETUP_FILE.is_file() else None)))
    return located


def _tasks_from_env() -> tuple[int, ...]:
    return parse_tasks(os.environ.get("DIALOG_TASKS", ""))


if __name__ == "__main__":
    run(root=DEFAULT_ROOT, data=DEFAULT_DATA, profile=os.environ.get("DIALOG_PROFILE", "quick"),
        tasks=_tasks_from_env(),
        beam_args=tuple(shlex.split(os.environ["DIALOG_BEAM_ARGS"])) if "DIALOG_BEAM_ARGS" in os.environ
        else DEFAULT_BEAM_ARGS)
