"""Training never destroys what it did not write, refuses settings that cannot train, and exports no model from a
run whose loss became NaN."""

from __future__ import annotations

import math
from pathlib import Path

import keras
import numpy as np
import pytest
from click.testing import CliRunner

from data.babi.generation import GenerationPlan, generate
from data.layout import dialog_file_name, discover
from models import training
from models.babi.template.config import TemplateConfig
from models.examples import TaskData
from models.features import Featurizer, build_spec
from models.serving.export import SPEC_ASSET, OutputRefused, prepare_output
from models.training import (
    EmbeddingsConfig,
    MemN2NConfig,
    TrainingDiverged,
    train,
    train_config,
    training_batches,
)
from pipeline.cli import main

TINY = ["--task", "1", "--epochs", "1", "--embedding-dim", "8", "--hops", "1"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=6, dialogs_per_split=4, tasks=(1,)), out, runner="local")
    return out


def test_an_out_that_is_not_a_model_is_refused_and_left_alone(corpus: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # "." is the test's own folder, should the guard ever break
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ideas.txt").write_text("keep me")
    before = sorted(p.name for p in corpus.iterdir())
    (tmp_path / "file").write_text("x")
    for out, code, message in ((notes, 1, "is not a model written by dialog train"),
                               (corpus, 2, "which this command reads; write elsewhere"),  # the corpus itself
                               (Path("."), 1, "not a place for a model")):
        result = CliRunner().invoke(main, ["train", "--data", str(corpus), *TINY, "--out", str(out)])
        assert result.exit_code == code and message in " ".join(result.output.split()), result.output
    assert (notes / "ideas.txt").read_text() == "keep me"
    assert sorted(p.name for p in corpus.iterdir()) == before
    with pytest.raises(OutputRefused, match="is not a directory"):
        prepare_output(tmp_path / "file")


def test_an_out_that_is_a_symbolic_link_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    """Replacing a link to an earlier model emptied the target (the model and a user's file) and left the link's
    staging behind: the link is refused, even to a model this project wrote."""
    model = tmp_path / "model"
    (model / "assets").mkdir(parents=True)
    (model / "saved_model.pb").write_bytes(b"pb")
    (model / "assets" / SPEC_ASSET).write_text("{}")
    (model / "report.txt").write_text("keep me")
    link = tmp_path / "link"
    link.symlink_to(model, target_is_directory=True)
    with pytest.raises(OutputRefused, match=r"link: is a symbolic link \(to .*model\)"):
        prepare_output(link)
    assert link.is_symlink() and (model / "report.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "model"]


def test_a_model_directory_holding_the_users_files_is_not_replaced(tmp_path: Path) -> None:
    """Retraining into a model directory replaced it whole, and took with it the report 'dialog evaluate --report'
    had written there: refused now, the model and the report kept."""
    model = tmp_path / "model"
    (model / "assets").mkdir(parents=True)
    (model / "saved_model.pb").write_bytes(b"pb")
    (model / "assets" / SPEC_ASSET).write_text("{}")
    prepare_output(model)  # our own files only: may be replaced
    (model / "mistakes.jsonl").write_text("keep me")
    with pytest.raises(OutputRefused, match="holds mistakes.jsonl, which dialog train did not write"):
        prepare_output(model)
    assert (model / "mistakes.jsonl").read_text() == "keep me" and (model / "saved_model.pb").exists()


def test_a_previous_model_is_replaced_and_a_killed_runs_leftovers_cleared(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    (tmp_path / ".model.tmp-0123abcd").mkdir()  # what killed runs leave
    (tmp_path / ".model.old-89abcdef").mkdir()
    (tmp_path / "empty").mkdir()
    for target in (out, out, tmp_path / "empty"):
        result = CliRunner().invoke(main, ["train", "--data", str(corpus), *TINY, "--out", str(target)])
        assert result.exit_code == 0, result.output
        assert (target / "saved_model.pb").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "model"]


@pytest.mark.parametrize(("setting", "value"), [("embedding_dim", 0), ("hops", -1), ("batch_size", 0),
                                                ("epochs", 0), ("max_memory", 0), ("learning_rate", math.nan),
                                                ("learning_rate", 0.0), ("learning_rate", -0.01),
                                                ("learning_rate", math.inf), ("clipnorm", 0.0)])
def test_settings_that_cannot_train_are_refused_by_name(setting: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"^{setting} must be"):
        train_config("memn2n", **{setting: value})


def test_each_model_has_its_own_settings() -> None:
    assert isinstance(train_config("template", fill_epochs=2), TemplateConfig)
    assert train_config("embeddings", negatives=5).negatives == 5
    with pytest.raises(ValueError, match="^embeddings has no setting hops"):
        train_config("embeddings", hops=2)
    with pytest.raises(ValueError, match="^negatives must be"):
        train_config("embeddings", negatives=0)
    with pytest.raises(ValueError, match="^model must be one of"):
        EmbeddingsConfig(model="memn2n")  # a config of one model named as another


def test_the_command_line_names_a_bad_setting_before_training(corpus: Path, tmp_path: Path) -> None:
    for option, value in (("--embedding-dim", "0"), ("--learning-rate", "nan"), ("--learning-rate", "-1")):
        result = CliRunner().invoke(main, ["train", "--data", str(corpus), *TINY, option, value,
                                           "--out", str(tmp_path / "m")])
        assert result.exit_code == 1, result.output
        assert f"Error: {option[2:].replace('-', '_')} must be a" in result.output
    assert not (tmp_path / "m").exists()


def test_a_run_whose_loss_becomes_nan_exports_nothing(corpus: Path, tmp_path: Path) -> None:
    config = MemN2NConfig(hops=1, embedding_dim=8, epochs=3, learning_rate=1e30)
    with pytest.raises(TrainingDiverged, match=r"the loss became nan in epoch \d; lower the learning rate"):
        train(discover(corpus)[1], config, out=tmp_path / "model")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_training_file_is_named(corpus: Path, tmp_path: Path) -> None:
    data = tmp_path / "corpus"
    data.mkdir()
    for path in corpus.iterdir():
        (data / path.name).write_bytes(path.read_bytes())
    (data / dialog_file_name(1, "trn")).write_text("")
    result = CliRunner().invoke(main, ["train", "--data", str(data), *TINY, "--out", str(tmp_path / "m")])
    assert result.exit_code == 1, result.output
    assert f"{data / dialog_file_name(1, 'trn')}: no dialog with a bot turn, nothing to train on" in result.output


def test_training_batches_train_like_fit_on_the_arrays() -> None:
    """Three epochs on ``training_batches`` end with the weights of ``fit`` on the arrays with shuffling (the
    same batches in the same order, epoch after epoch), the seed being the same."""
    rng = np.random.default_rng(0)
    features = {"x": rng.normal(size=(300, 4)).astype(np.float32)}
    labels = rng.integers(0, 3, size=300)

    def trained(batched: bool) -> list[np.ndarray]:
        keras.utils.set_random_seed(1)  # before the batches are made: their shuffling reads the seed
        model = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(3)])
        model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        data = ({"x": training_batches(features, labels, 32)} if batched
                else {"x": features, "y": labels, "batch_size": 32, "shuffle": True})
        model.fit(**data, epochs=3, verbose=0)
        return model.get_weights()

    for got, expected in zip(trained(True), trained(False), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_the_graph_loop_trains_the_numbers_of_keras_loop(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fit`` runs ``STEPS_PER_CALL`` steps a call of its compiled function, the last call of an epoch stopping
    where the batches end: every step is taken, in Keras' order, so each epoch's loss and dev accuracy and the
    weights kept equal those of Keras' own loop (a step a call) to the bit."""
    task = TaskData.load(discover(corpus)[1], splits=("trn", "dev"))
    trn, dev = task.split("trn"), task.split("dev")
    config = MemN2NConfig(hops=2, embedding_dim=8, epochs=2, batch_size=1, match_type=True,
                          per_occurrence_gradient=True, only_learned_words=True)
    spec = build_spec(task, memory_size=training.memory_size_for(config, trn + dev))
    assert training.STEPS_PER_CALL < len(trn) < 2 * training.STEPS_PER_CALL  # a whole call and a part of one

    def trained(steps: int) -> tuple[keras.Model, list[tuple[float, float]]]:
        monkeypatch.setattr(training, "STEPS_PER_CALL", steps)
        model, summary = training.fit(spec, trn, dev, config)
        return model, [(epoch["loss"], epoch["dev_per_response_accuracy"]) for epoch in summary["history"]]

    (looped, looped_epochs), (stepped, stepped_epochs) = trained(16), trained(1)
    assert (looped.steps_per_execution, stepped.steps_per_execution) == (16, 1)
    assert looped_epochs == stepped_epochs and len(looped_epochs) == config.epochs
    assert int(looped.optimizer.iterations.numpy()) == config.epochs * len(trn)
    for got, expected in zip(looped.get_weights(), stepped.get_weights(), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_a_model_compiled_again_trains_with_keras_loop(corpus: Path) -> None:
    """``compile`` sets a call back to one step: the loop installed before gives way to Keras' own, which takes each
    batch once (the loop, called once per batch, would run past the last one)."""
    task = TaskData.load(discover(corpus)[1], splits=("trn", "dev"))
    trn = task.split("trn")
    config = MemN2NConfig(hops=1, embedding_dim=8, epochs=1, batch_size=1)
    spec = build_spec(task, memory_size=training.memory_size_for(config, trn))
    features, labels = training.featurize(Featurizer(spec), trn), training.answer_indices(spec, trn)
    model = training.build_model(spec, config)
    model.compile(optimizer=keras.optimizers.Adam(0.005), loss=training.training_loss(config))
    training.loop_training_steps(model, features, 16)
    model.compile(optimizer=keras.optimizers.Adam(0.005), loss=training.training_loss(config))
    model.fit(training_batches(features, labels, 1), epochs=1, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == len(trn)
