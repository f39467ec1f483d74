"""The ``dialog`` group itself: its global options; each command group's module adds its commands to it."""

from __future__ import annotations

import warnings

import click

from pipeline.cli.infra import DialogGroup, quiet_frameworks


@click.group(cls=DialogGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--verbose", is_flag=True, help="Show TensorFlow's, TFX's and Beam's own logs and warnings.")
@click.option("--quiet", is_flag=True,
              help="No progress bars and no epoch lines (bars are drawn only when stderr is a terminal anyway).")
def main(verbose: bool, quiet: bool) -> None:
    """End-to-end goal-oriented dialog (dialog-bAbI and friends) on TFX."""
    from data.progress import set_quiet

    set_quiet(quiet)
    # Google client libraries warn on import that support for this Python will end: noise for every command.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\.")
    if not verbose:
        quiet_frameworks()
