"""Table 2's methods: registered in the table's column order, each fitted through the one protocol; the MemN2N rows
choose their optimiser step and epoch on dev for the plain sets and on the OOV dev set for the OOV sets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate
from models import methods
from models.babi import methods as babi_methods
from models.babi.methods import PAPER_METHODS
from models.babi.plugin import TRAIN_MODELS
from models.babi.profiles import MODEL_METHODS


def test_the_paper_columns_come_first_and_every_method_has_a_title() -> None:
    names = methods.names("babi")
    assert tuple(names[:len(PAPER_METHODS)]) == PAPER_METHODS
    assert all(methods.get(name).title and methods.get(name).paper == "babi" for name in names)
    assert set(TRAIN_MODELS.values()) <= set(names) and set(MODEL_METHODS.values()) <= set(names)


def test_an_ablation_removes_its_part_from_a_given_config_too() -> None:
    """``dialog train --config`` or a pipeline profile gives the config; ``hcn-no_kb_match`` and the state's
    ablation still take their part out of it, and the full model keeps what the config says."""
    from models.babi.template.config import TemplateConfig

    given = methods.Settings(config=TemplateConfig(encoder="lstm", kb_match=True, dialog_state=True, epochs=3))
    ablated = babi_methods._template_config(None, given, dialog_state=False, encoder="lstm", kb_match=False)
    assert (ablated.kb_match, ablated.dialog_state, ablated.epochs) == (False, False, 3)
    kept = babi_methods._template_config(None, given, dialog_state=True, encoder="lstm")
    assert kept == given.config


def test_a_method_that_does_not_apply_says_why(tmp_path: Path) -> None:
    from data.layout import discover
    from models.examples import TaskData

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=1, dialogs_per_split=3, tasks=(1,)), data, runner="local")
    loaded = TaskData.load(discover(data)[1])
    task = replace(loaded, files=replace(loaded.files, task=9))  # a task with no rule-based system
    with pytest.raises(methods.NotApplicable, match="no rule-based system"):
        methods.get("rule_based").fit(task, tmp_path / "work", methods.Settings())


def _memn2n_rows_trained(tmp_path: Path, monkeypatch, tasks: tuple[int, ...], scores: dict[float, tuple[float, float]],
                         settings: methods.Settings | None = None, method: str = "memn2n_match",
                         key=lambda config: config.learning_rate) -> tuple[list, methods.Fitted]:
    """Run a Table 2 row's fit (a MemN2N row by default) with `train` scripted: each variant's best (dev, OOV dev)
    accuracy, the variant found by ``key``."""
    from data.layout import discover
    from models.examples import TaskData

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=4, dialogs_per_split=5, tasks=tasks), data, runner="local")
    trained = []

    def scripted_train(task, config, out, settings, oov_dev=None, top_k=None, oov_out=None):
        assert oov_dev, "the row hands each config the OOV dev set it made once"
        assert oov_out is not None and out.parent == oov_out.parent
        trained.append(config)
        dev, oov = scores[key(config)]
        return {"best_epoch": 1, "dev_per_response_accuracy": dev, "train_seconds": 1.0, "history": [{"epoch": 4}],
                "oov_dev_best_epoch": 3, "oov_dev_best_per_response_accuracy": oov}

    monkeypatch.setattr(babi_methods, "_train", scripted_train)
    monkeypatch.setattr(babi_methods, "ExportedRanker", lambda directory: str(directory))
    fitted = methods.get(method).fit(TaskData.load(discover(data)[tasks[0]]), tmp_path / "work" / f"task1-{method}",
                                     settings or methods.Settings())
    return trained, fitted


def test_each_kind_of_set_takes_the_step_and_epoch_best_on_its_own_dev_set(tmp_path: Path, monkeypatch) -> None:
    from models.training import OOV_DEV_SPLIT

    # dev prefers the defaults, the OOV dev set the smaller step
    trained, fitted = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {0.005: (100.0, 92.0), 0.001: (99.5, 96.5)})
    assert [(c.learning_rate, c.batch_size, c.epochs, c.patience) for c in trained] == [
        (0.005, 128, babi_methods.MAX_EPOCHS, babi_methods.PATIENCE["memn2n"]), (0.001, 32, babi_methods.MAX_EPOCHS,
                                                                       babi_methods.PATIENCE["memn2n"])]
    assert all(c.only_learned_words and c.per_occurrence_gradient and c.match_type and not c.select_on_oov_dev
               for c in trained)
    for split in ("tst", "dev"):
        assert methods.for_split(fitted, split).endswith("task1-memn2n_match/variant0/dev")
    for split in ("tst-OOV", OOV_DEV_SPLIT):
        assert methods.for_split(fitted, split).endswith("task1-memn2n_match/variant1/oov")
    assert "plain sets: Adam 0.005 in batches of 128, best epoch 1/4 on dev (100.0%); OOV sets:" in fitted.note
    assert "OOV sets: Adam 0.001 in batches of 32, best epoch 3/4 on OOV dev (96.5%)" in fitted.note


def test_a_memn2n_row_keeps_the_defaults_on_a_tie_and_takes_the_epochs_given(tmp_path: Path, monkeypatch) -> None:
    trained, fitted = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {0.005: (98.0, 96.0), 0.001: (98.0, 96.0)},
                                           methods.Settings(epochs=7))
    assert [c.epochs for c in trained] == [7, 7]
    assert methods.for_split(fitted, "tst").endswith("variant0/dev")
    assert methods.for_split(fitted, "tst-OOV").endswith("variant0/oov")


def test_the_embeddings_row_chooses_a_equal_to_b_on_each_kind_of_dev_set(tmp_path: Path, monkeypatch) -> None:
    """Section 4.3: A = B "sometimes works better", chosen on the validation set; here dev prefers it and the OOV
    dev set prefers A and B apart."""
    from models.training import OOV_DEV_SPLIT

    trained, fitted = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {False: (64.1, 64.2), True: (64.7, 61.6)},
                                           method="embeddings", key=lambda config: config.shared_embeddings)
    assert [c.shared_embeddings for c in trained] == [False, True]
    assert all(c.model == "embeddings" and c.epochs == babi_methods.MAX_EPOCHS for c in trained)
    assert methods.for_split(fitted, "dev").endswith("task1-embeddings/variant1/dev")
    assert methods.for_split(fitted, OOV_DEV_SPLIT).endswith("task1-embeddings/variant0/oov")
    assert fitted.note.startswith("plain sets: A = B, best epoch 1/4 on dev (64.7%); OOV sets: A and B apart, best "
                                  "epoch 3/4 on OOV dev (64.2%); each chosen over 1 other choice of A and B")
