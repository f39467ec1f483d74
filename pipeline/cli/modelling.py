"""Model commands: ``train`` one model, ``evaluate`` it on a split, ``explain`` its attention."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from pipeline.cli.app import main
from pipeline.cli.infra import keras_verbosity
from pipeline.cli.options import CorpusDirectory, OutputPath, refuse_own_input, split_option, task_files


@main.command()
@click.option("--data", required=True, type=CorpusDirectory(),
              help="Corpus directory in the dialog-bAbI layout.")
@click.option("--task", required=True, type=int, help="Task number (1-6).")
@click.option("--model", "model_kind", type=click.Choice(["memn2n", "embeddings", "template", "hcn"]),
              default="memn2n", show_default=True,
              help="MemN2N (appendix A), supervised embeddings (4.3), the template ranker (a MemN2N over "
                   "delexicalised answers and a learned filler, one SavedModel), or Hybrid Code Networks (the "
                   "template ranker with an LSTM over the utterances, three seeds averaged, and its action mask: "
                   "task 6's product model).")
@click.option("--match-type/--no-match-type", default=False, show_default=True, help="Match-type features (4.5).")
@click.option("--preset", type=click.Choice(["paper", "none"]), default="paper", show_default=True,
              help="paper: Table 9 (MemN2N) or Table 8 (embeddings) settings for the task.")
@click.option("--history/--no-history", "use_history", default=None,
              help="Embeddings: the whole history as input, or the last utterance (overrides the preset).")
@click.option("--shared-embeddings", is_flag=True, help="Embeddings: A = B.")
@click.option("--hops", type=click.IntRange(1, 4), help="Memory hops (overrides the preset).")
@click.option("--embedding-dim", type=int, help="Embedding size (overrides the preset).")
@click.option("--learning-rate", type=float, help="Adam learning rate (overrides the preset).")
@click.option("--only-learned-words", is_flag=True,
              help="MemN2N: words no training dialog holds (OOV entities) keep a zero embedding.")
@click.option("--per-occurrence-gradient", is_flag=True,
              help="MemN2N: a gradient row per word occurrence, as a Keras Embedding layer gives it, so Adam steps "
                   "words said often in a batch further (Table 2's MemN2N rows; slower).")
@click.option("--select-on-oov-dev", is_flag=True,
              help="Choose the epoch on the mean of dev and an OOV dev made from it (its KB entities swapped for "
                   "ones no training dialog holds), not on dev alone.")
@click.option("--epochs", type=click.IntRange(min=1), help="At most this many epochs (default: the shared one).")
@click.option("--batch-size", type=click.IntRange(min=1), help="Examples per step (default: the shared one).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--per-epoch", "with_history", is_flag=True,
              help="Add each epoch's loss, dev accuracy, training and dev evaluation seconds to the JSON.")
@click.option("--out", required=True, type=OutputPath(file_okay=False),
              help="SavedModel directory, local or remote (gs://...): a new one, an empty one, or a model dialog "
                   "train wrote before, holding nothing else (replaced whole once the new one is written). Anything "
                   "else, a report written into a model directory included, is refused before training, never "
                   "replaced.")
@click.option("--log-dir", type=OutputPath(file_okay=False), help="TensorBoard log directory.")
def train(data: Path, task: int, model_kind: str, match_type: bool, preset: str, use_history: bool | None,
          shared_embeddings: bool, hops: int | None, embedding_dim: int | None, learning_rate: float | None,
          only_learned_words: bool, per_occurrence_gradient: bool, select_on_oov_dev: bool, epochs: int | None,
          batch_size: int | None, seed: int, with_history: bool, out: str, log_dir: str | None) -> None:
    """Train on trn, keep the best epoch on dev, write a self-contained SavedModel. Prints a JSON summary."""
    from data.atomic import one_writer_of
    from data.babi_format import FormatError
    from models import methods
    from models.babi.methods import MODEL_METHODS
    from models.babi.presets import HCN_PRODUCT, paper_config
    from models.examples import TaskData
    from models.serving.export import prepare_output
    from models.training import train_config

    overrides = {key: value for key, value in (("hops", hops), ("embedding_dim", embedding_dim),
                                               ("learning_rate", learning_rate), ("use_history", use_history),
                                               ("epochs", epochs), ("batch_size", batch_size))
                 if value is not None}
    # A flag of another model (--hops of the embeddings) is refused by name, so only the flags given are passed.
    flags = {name: True for name, given in (("shared_embeddings", shared_embeddings),
                                            ("only_learned_words", only_learned_words),
                                            ("per_occurrence_gradient", per_occurrence_gradient)) if given}
    common = {"match_type": match_type, "seed": seed, "select_on_oov_dev": select_on_oov_dev, **flags, **overrides}
    refuse_own_input(out, "--out", data)
    refuse_own_input(log_dir, "--log-dir", data)
    if model_kind == "hcn":  # the template ranker's config and method, as the pipeline trains task 6's model
        model_kind, common = "template", {**HCN_PRODUCT, **common}
    try:  # a setting that cannot train, or an --out that is not ours, is refused before any training
        config = (paper_config(task, model=model_kind, **common) if preset == "paper"
                  else train_config(model_kind, **common))
        # One writer of --out (a second would clear this one's staging); Keras' epoch lines to stderr: stdout is
        # the JSON alone.
        with one_writer_of(out), contextlib.redirect_stdout(sys.stderr):
            prepare_output(out)  # before reading the corpus: a refused --out costs nothing
            loaded = TaskData.load(task_files(data, task), splits=("trn", "dev"))
            fitted = methods.get(MODEL_METHODS[model_kind], "babi").fit(
                loaded, out, methods.Settings(config=config, verbose=keras_verbosity(), log_dir=log_dir))
    except (FormatError, FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    summary = {"task": task, **fitted.summary}
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
