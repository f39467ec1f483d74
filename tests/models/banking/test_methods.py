"""SMN, MMN and ours are in the one registry by name; MMN says when it cannot apply (no intents to route by)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from data.layout import discover
from models import methods
from models.banking.methods import config_of
from models.banking.networks import PAPER_EPOCHS, paper_config
from models.banking.state_ranker import FEATURE_GROUPS
from models.examples import TaskData
from models.methods import NotApplicable, Settings


def test_smn_mmn_and_ours_are_registered_for_the_banking_paper() -> None:
    assert [(methods.get(name).paper, methods.get(name).title) for name in ("smn", "mmn", "state_ranker")] == [
        ("banking", "SMN"), ("banking", "MMN"), ("banking", "State ranker (ours)")]
    assert methods.names("banking") == ["smn", "mmn", "state_ranker", *(
        f"state_ranker-no_{group}" for group in FEATURE_GROUPS)]  # the tables' column order


def test_the_paper_recipe_at_most_its_epochs_or_the_config_given() -> None:
    assert config_of(Settings()) == paper_config(PAPER_EPOCHS, patience=3)
    assert config_of(Settings(epochs=3)).epochs == 3
    assert config_of(Settings(epochs=50)).epochs == PAPER_EPOCHS
    exact = paper_config(7, learning_rate=0.01)
    assert config_of(Settings(epochs=3, config=exact)) is exact


def test_mmn_does_not_apply_without_intents(banking, tmp_path: Path) -> None:
    out, files = banking
    corpus = tmp_path / "corpus"
    shutil.copytree(out, corpus, ignore=shutil.ignore_patterns("*-labels.jsonl"))
    mmn = methods.get("mmn", "banking")
    with pytest.raises(NotApplicable, match="no labels sidecar"):
        mmn.fit(TaskData.load(discover(corpus)[7]), tmp_path / "mmn", Settings(epochs=1))
    task = TaskData.load(files)
    with pytest.raises(NotApplicable, match="only the banking task"):
        mmn.fit(replace(task, files=replace(files, task=1)), tmp_path / "mmn", Settings(epochs=1))
    assert not (tmp_path / "mmn").exists()
