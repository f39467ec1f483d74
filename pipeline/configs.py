"""Settings of the `dialog` pipeline: where things live, and how the code reaches Beam's workers. The training
profiles are each paper's (``models.papers``: ``models/<paper>/profiles.py``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

PIPELINE_NAME = "dialog"
REPO_ROOT = Path(__file__).resolve().parent.parent
CURATED_SCHEMA = Path(__file__).resolve().parent / "schema" / "schema.pbtxt"
DEFAULT_ROOT = Path(os.environ.get("DIALOG_PIPELINE_ROOT", REPO_ROOT / "pipeline_output"))
DEFAULT_DATA = Path(os.environ.get("DIALOG_DATA", REPO_ROOT / "corpora" / "restaurant"))
# The Beam options by which TFX knows that the workers get Python code some way. With none of them, every Beam
# component run packs TFX's own installation into a new temporary directory (about 50 MB, never removed) and ships
# that alone: the project's code would be missing on a remote worker, and /tmp fills up run after run.
CODE_SHIPPING_OPTIONS = ("extra_packages", "setup_file", "requirements_file", "worker_harness_container_image",
                         "sdk_container_image")
# setup.py where the components run: the repository (dialog pipeline) or the image's /app (the Dockerfile).
LOCAL_SETUP_FILE = REPO_ROOT / "setup.py"
IMAGE_SETUP_FILE = "/app/setup.py"


def with_code_shipped(beam_args: Sequence[str], setup_file: str | Path | None) -> tuple[str, ...]:
    """``beam_args`` with ``--setup_file`` (Beam's workers install the project from it) unless they already say
    how the code gets there, or there is no setup file (an installed copy: TFX then ships itself)."""
    named = {arg.lstrip("-").split("=", 1)[0] for arg in beam_args if arg.startswith("--")}
    if named & set(CODE_SHIPPING_OPTIONS) or setup_file is None:
        return tuple(beam_args)
    return (*beam_args, f"--setup_file={setup_file}")


MOVIE_SCHEMA = Path(__file__).resolve().parent / "schema" / "movie_schema.pbtxt"
