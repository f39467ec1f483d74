"""Table 2's methods: registered in the table's column order, each fitted through the one protocol; the MemN2N rows
choose their optimiser step on dev and the OOV dev set."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate
from models import methods
from models.babi import methods as babi_methods
from models.babi.methods import PAPER_METHODS


def test_the_paper_columns_come_first_and_every_method_has_a_title() -> None:
    names = methods.names("babi")
    assert tuple(names[:len(PAPER_METHODS)]) == PAPER_METHODS
    assert all(methods.get(name).title and methods.get(name).paper == "babi" for name in names)
    assert set(babi_methods.MODEL_METHODS.values()) <= set(names)


def test_a_method_that_does_not_apply_says_why(tmp_path: Path) -> None:
    from data.layout import discover
    from models.examples import TaskData

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=1, dialogs_per_split=3, tasks=(1,)), data, runner="local")
    loaded = TaskData.load(discover(data)[1])
    task = replace(loaded, files=replace(loaded.files, task=9))  # a task with no rule-based system
    with pytest.raises(methods.NotApplicable, match="no rule-based system"):
        methods.get("rule_based").fit(task, tmp_path / "work", methods.Settings())


def _memn2n_rows_trained(tmp_path: Path, monkeypatch, tasks: tuple[int, ...], scores: dict[float, tuple[float, float]]
                         ) -> tuple[list, str, str]:
    """Run the MemN2N row's fit with `train` scripted: each learning rate's (dev, OOV dev) accuracy."""
    from data.layout import discover
    from models.examples import TaskData

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=4, dialogs_per_split=5, tasks=tasks), data, runner="local")
    trained = []

    def scripted_train(task, config, out, settings, oov_dev=None, top_k=None):
        assert oov_dev, "the row hands each config the OOV dev set it made once"
        trained.append(config)
        dev, oov = scores[config.learning_rate]
        summary = {"best_epoch": 1, "dev_per_response_accuracy": dev, "train_seconds": 1.0}
        return summary | ({"oov_dev_per_response_accuracy": oov} if config.select_on_oov_dev and oov is not None
                          else {})

    monkeypatch.setattr(babi_methods, "_train", scripted_train)
    monkeypatch.setattr(babi_methods, "ExportedRanker", lambda directory: directory)
    fitted = methods.get("memn2n_match").fit(TaskData.load(discover(data)[tasks[0]]),
                                             tmp_path / "work" / "task1-memn2n_match", methods.Settings(epochs=30))
    return trained, str(fitted.ranker), fitted.note


def test_a_memn2n_row_keeps_the_step_better_on_dev_and_the_oov_dev_set(tmp_path: Path, monkeypatch) -> None:
    # scripted so that dev alone would keep the defaults and the mean with the OOV dev set turns it
    trained, chosen, note = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {0.005: (100.0, 92.0),
                                                                               0.001: (99.5, 96.5)})
    assert [(c.learning_rate, c.batch_size, c.epochs) for c in trained] == [(0.005, 128, 30), (0.001, 32, 12)]
    assert all(c.select_on_oov_dev and c.only_learned_words and c.per_occurrence_gradient and c.match_type
               for c in trained)
    assert chosen.endswith("task1-memn2n_match/step1") and "Adam 0.001 in batches of 32" in note


def test_a_memn2n_row_keeps_the_defaults_on_a_tie(tmp_path: Path, monkeypatch) -> None:
    _, chosen, note = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {0.005: (100.0, 94.0), 0.001: (98.0, 96.0)})
    assert chosen.endswith("task1-memn2n_match/step0") and "Adam 0.005 in batches of 128" in note
