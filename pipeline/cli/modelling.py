"""Model commands: ``train`` one model, ``evaluate`` it on a split, ``explain`` its attention."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from pipeline.cli.app import main
from pipeline.cli.infra import keras_verbosity
from pipeline.cli.options import CorpusDirectory, OutputPath, corpus_paper, refuse_own_input, split_option, task_files


def _model_help() -> str:
    """``--model``'s help: each paper's models, as the registry of papers has them."""
    from models import papers

    try:
        found = papers.papers().values()
    except ValueError as error:  # a DIALOG_PAPERS module that cannot be imported: said here, refused when run
        return f"A model of the corpus' paper (default: its first). ({error})"
    return "A model of the corpus' paper (default: its first). " + " ".join(
        f"{paper.title}: {paper.train_help}" for paper in found)


@main.command()
@click.option("--data", required=True, type=CorpusDirectory(), help="A corpus of any paper.")
@click.option("--task", type=int, help="Task number (each paper's own; Movie Dialog's joint models take none).")
@click.option("--model", "model_kind", help=_model_help())
@click.option("--match-type/--no-match-type", default=None, help="Match-type features (4.5; default off).")
@click.option("--preset", type=click.Choice(["paper", "none"]),
              help="paper (the default): the paper's settings for the task (bAbI: Table 9 for MemN2N, Table 8 for the "
                   "embeddings; banking: Majumdar et al.'s); none: the shared defaults.")
@click.option("--history/--no-history", "use_history", default=None,
              help="Embeddings: the whole history as input, or the last utterance (overrides the preset).")
@click.option("--shared-embeddings", is_flag=True, default=None, help="Embeddings: A = B.")
@click.option("--hops", type=click.IntRange(1, 4), help="Memory hops (overrides the preset).")
@click.option("--embedding-dim", type=int, help="Embedding size (overrides the preset).")
@click.option("--learning-rate", type=float, help="Adam learning rate (overrides the preset).")
@click.option("--only-learned-words", is_flag=True, default=None,
              help="MemN2N: words no training dialog holds (OOV entities) keep a zero embedding.")
@click.option("--per-occurrence-gradient", is_flag=True, default=None,
              help="MemN2N: a gradient row per word occurrence, as a Keras Embedding layer gives it, so Adam steps "
                   "words said often in a batch further (Table 2's MemN2N rows; slower).")
@click.option("--select-on-oov-dev", is_flag=True, default=None,
              help="Choose the epoch on the mean of dev and an OOV dev made from it (its KB entities swapped for "
                   "ones no training dialog holds), not on dev alone.")
@click.option("--epochs", type=click.IntRange(min=1), help="At most this many epochs (default: the model's own).")
@click.option("--batch-size", type=click.IntRange(min=1), help="Examples per step (default: the model's own).")
@click.option("--seed", type=int, help="Training seed (default 0).")
@click.option("--per-epoch", "with_history", is_flag=True,
              help="Add each epoch's loss, dev accuracy, training and dev evaluation seconds to the JSON.")
@click.option("--out", required=True, type=OutputPath(file_okay=False),
              help="SavedModel directory, local or remote (gs://...): a new one, an empty one, or a model dialog "
                   "train wrote before, holding nothing else (replaced whole once the new one is written). Anything "
                   "else, a report written into a model directory included, is refused before training, never "
                   "replaced.")
@click.option("--log-dir", type=OutputPath(file_okay=False), help="TensorBoard log directory.")
def train(data: Path, task: int | None, model_kind: str | None, with_history: bool, out: str, log_dir: str | None,
          **options: object) -> None:
    """Train a model of the corpus' paper on trn, keep the best epoch on dev, write a self-contained SavedModel.
    Prints a JSON summary. The options given are the model's settings: one its model has not is refused by name."""
    from data.atomic import one_writer_of
    from data.babi_format import FormatError
    from models.methods import Settings

    refuse_own_input(out, "--out", data)
    refuse_own_input(log_dir, "--log-dir", data)
    paper, _ = corpus_paper(data, () if task is None else (task,), "--task")
    model_kind = model_kind or next(iter(paper.train_models))
    if model_kind not in paper.train_models:
        raise click.BadParameter(f"{model_kind!r} is not a model of {paper.title}; choose from "
                                 f"{', '.join(paper.train_models)}", param_hint="--model")
    given = {name: value for name, value in options.items() if value is not None}
    try:  # a setting that cannot train, or an --out that is not ours, is refused before any training
        # One writer of --out (a second would clear this one's staging); Keras' epoch lines to stderr: stdout is
        # the JSON alone.
        with one_writer_of(out), contextlib.redirect_stdout(sys.stderr):
            summary = paper.train(data, task, model_kind, out, given,
                                  Settings(verbose=keras_verbosity(), log_dir=log_dir))
    except (FormatError, FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    summary = {"task": task, **summary} if task is not None else summary
    if not with_history:
        summary = {key: value for key, value in summary.items() if key != "history"}
        if "template_model" in summary:
            summary["template_model"] = {k: v for k, v in summary["template_model"].items() if k != "history"}
    click.echo(json.dumps(summary, allow_nan=False))


@main.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", required=True, type=CorpusDirectory())
@click.option("--task", required=True, type=int)
@split_option
@click.option("--report", type=OutputPath(dir_okay=False, path_type=Path), help="Write the mistakes as JSON lines.")
def evaluate(model_dir: Path, data: Path, task: int, split: str, report: Path | None) -> None:
    """Per-response and per-dialog accuracy of a model on a split, as one JSON line."""
    from models.examples import split_examples
    from models.serving.evaluate import answers_outside
    from models.serving.evaluate import evaluate as run_evaluation
    from models.serving.ranker import SavedModelRanker

    refuse_own_input(report, "--report", data, model_dir)
    try:
        examples = split_examples(task_files(data, task), split)
        ranker = SavedModelRanker(model_dir)
        result = run_evaluation(ranker, examples, report)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    outside, candidates = answers_outside(ranker.directory, examples)
    if outside:
        click.echo(f"warning: {outside:,} of {len(examples):,} gold answers are not among the model's {candidates:,} "
                   "candidates (a model of another corpus?): those turns cannot be answered right", err=True)
    click.echo(json.dumps({**result, "answers_outside_candidates": outside}))


@main.command()
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", required=True, type=CorpusDirectory())
@click.option("--task", required=True, type=int)
@click.option("--dialog", "dialog_index", required=True, type=click.IntRange(min=0),
              help="Dialog number in the split, from 0 (its id is babi-N/split/K).")
@split_option
@click.option("--png", type=OutputPath(dir_okay=False, path_type=Path), help="Write a heat map of one turn.")
@click.option("--turn", type=click.IntRange(min=0),
              help="Bot turn for the heat map (default: the dialog's last); needs --png.")
def explain(model_dir: Path, data: Path, task: int, dialog_index: int, split: str, png: Path | None,
            turn: int | None) -> None:
    """Per-hop attention over the memories for each bot turn of a dialog (Tables 3-6 of the paper)."""
    if turn is not None and png is None:
        raise click.BadParameter("--turn picks the turn of the heat map: give --png too", param_hint="--turn")
    from models.examples import DialogId, split_examples
    from models.serving.explain import explain_turns, format_turn, write_heat_map
    from models.serving.ranker import SavedModelRanker

    refuse_own_input(png, "--png", data, model_dir)
    try:
        examples = split_examples(task_files(data, task), split)
        ranker = SavedModelRanker(model_dir)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    wanted = [e for e in examples if DialogId.parse(e.dialog_id).index == dialog_index]
    if not wanted:
        raise click.ClickException(f"task {task} {split} has no dialog {dialog_index}")
    turns = explain_turns(ranker, wanted)
    click.echo("\n\n".join(format_turn(t) for t in turns))
    if png is not None:
        chosen = turns[-1] if turn is None else next((t for t in turns if t.example.turn == turn), None)
        if chosen is None:
            raise click.ClickException(f"dialog {dialog_index} has no bot turn {turn} (0-{len(turns) - 1})")
        write_heat_map(chosen, png)
        click.echo(f"wrote {png}", err=True)
