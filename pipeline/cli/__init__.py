"""The ``dialog`` command line: generate, convert, check and describe corpora; train, evaluate, explain and chat
with models; the paper tables; the TFX pipeline.

One module per command group (``corpora``, ``modelling``, ``tables``, ``runs``, ``serving``), each adding its
commands to the group of ``app``; the shared infrastructure (logs, error translation, the disk policy) is
``infra``, the shared option types and checks ``options``. Subcommands import what they need when they run, so
that ``dialog validate`` does not pay for TensorFlow.
"""

from __future__ import annotations

from pipeline.cli import corpora, modelling, runs, serving, tables  # noqa: F401 (each adds its commands)
from pipeline.cli.app import main
from pipeline.cli.infra import file_system_error, quiet_frameworks
from pipeline.cli.options import OutputPath

__all__ = ["OutputPath", "file_system_error", "main", "quiet_frameworks"]
