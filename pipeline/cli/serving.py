"""``dialog chat``: talk to a trained or pushed model in the terminal."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from pipeline.cli.app import main


@main.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A SavedModel, or a pushed model's base directory (its newest version is used).")
@click.option("--kb", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="KB file for API calls (default: corpora/restaurant/dialog-babi-kb-all.txt when present).")
def chat(model_dir: Path, kb: Path | None) -> None:
    """Talk to a model in the terminal; API calls are answered from the KB. An empty line is <SILENCE>;
    end with Ctrl-D. A Movie Dialog model answers from the KB it holds (its long-term memory)."""
    from data.babi_format import FormatError, read_kb
    from data.layout import SHARED_KB
    from pipeline.configs import DEFAULT_DATA

    given = kb
    kb = kb or (DEFAULT_DATA / SHARED_KB if (DEFAULT_DATA / SHARED_KB).is_file() else None)
    try:
        facts = read_kb(kb).facts if kb else []
    except FormatError as error:
        raise click.ClickException(str(error)) from None
    from models.serving.chat import ChatSession
    from models.serving.ranker import holds_long_term_memory, resolve_model_dir

    try:
        resolved = resolve_model_dir(model_dir)
        if given is not None and holds_long_term_memory(resolved):
            raise click.ClickException(f"{resolved} is a Movie Dialog model: it answers from the KB it holds and "
                                       "makes no API calls, so --kb does not apply")  # before loading the model
        session = ChatSession(model_dir, facts)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    if session.long_term_memory is not None:
        session.facts = []
        sentences = session.long_term_memory.get("kb_sentences", 0)
        click.echo(f"model {session.model_dir}; KB its own long-term memory ({sentences:,} KB sentences)", err=True)
    else:
        click.echo(f"model {session.model_dir}; KB {kb or 'none (API calls are not answered)'}", err=True)
    with contextlib.suppress(AttributeError, ValueError):  # undecodable bytes reach respond(), which refuses them
        sys.stdin.reconfigure(errors="surrogateescape")
    while True:
        try:
            user = input("you> ")
        except EOFError:
            click.echo("", err=True)
            return
        except UnicodeDecodeError:
            click.echo("that line is not valid UTF-8; the conversation is kept", err=True)
            continue
        try:
            produced = session.respond(user)
        except ValueError as error:
            click.echo(str(error), err=True)
            continue
        for speaker, line in produced:
            click.echo(f"{speaker + '>':<5}{line}")
