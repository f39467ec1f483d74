"""A fourth paper, registered from ``tests/fourth_paper`` by ``DIALOG_PAPERS`` with no edit under ``data/``,
``models/``, ``components/`` or ``pipeline/``: the commands find it from its corpus and run its method, its table
and its pipeline product."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from models import methods, papers
from pipeline.cli import main
from tests.fourth_paper import plugin
from tests.fourth_paper.corpus import NAME, write_corpus

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def echo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The echo corpus, with the paper registered for this test alone (the registries are restored after)."""
    methods.load()  # the built-in papers' methods, registered in the registry this test's copy is made from
    monkeypatch.setattr(methods, "REGISTRY", dict(methods.REGISTRY))
    monkeypatch.delitem(sys.modules, "tests.fourth_paper.methods", raising=False)  # registers in the copy
    monkeypatch.setenv(papers.PAPERS_VARIABLE, "tests.fourth_paper.plugin")
    curated = (ROOT / "pipeline" / "schema" / "schema.pbtxt").read_text()
    anchor = '  value: "banking"\n'
    assert anchor in curated  # the task domain the echo task's value joins
    (tmp_path / "schema.pbtxt").write_text(curated.replace(anchor, anchor + f"  value: \"{NAME}\"\n"))
    monkeypatch.setattr(plugin, "SCHEMA", tmp_path / "schema.pbtxt")
    return write_corpus(tmp_path / "echo")


def test_a_fourth_paper_is_validated_trained_tabled_and_piped_by_the_commands(echo: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    assert papers.of_corpus(echo) == (plugin.PAPER, (9,))
    validated = runner.invoke(main, ["validate", str(echo)])
    assert validated.exit_code == 0 and validated.output.startswith("OK"), validated.output

    trained = runner.invoke(main, ["train", "--data", str(echo), "--task", "9", "--out", str(tmp_path / "model")])
    assert trained.exit_code == 0, trained.output
    assert json.loads(trained.stdout)["task"] == 9 and (tmp_path / "model" / "saved_model.pb").is_file()
    other = runner.invoke(main, ["train", "--data", str(echo), "--task", "9", "--model", "template",
                                 "--out", str(tmp_path / "other")])
    assert other.exit_code == 2 and "'template' is not a model of echo (a fourth paper)" in other.output

    table = tmp_path / "echo.md"
    tabled = runner.invoke(main, ["benchmark", "--data", str(echo), "--out", str(table), "--epochs", "1"])
    assert tabled.exit_code == 0, tabled.output
    assert table.read_text().splitlines()[2].startswith("| 9 | ")
    seeds = runner.invoke(main, ["benchmark", "--data", str(echo), "--out", str(table), "--seeds", "2"])
    assert seeds.exit_code == 2 and "have no --seeds" in seeds.output

    ran = runner.invoke(main, ["pipeline", "--quick", "--data", str(echo), "--root", str(tmp_path / "root")])
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.stdout.splitlines()[-1])
    assert summary["model"] == "echo" and list(summary["models"]) == ["echo"] and summary["blessed"], summary
    assert summary["pushed_model"].startswith(str(tmp_path / "root" / "serving_model" / "echo"))
    assert summary["slices"]["split=dev"]["turns"] == 2 * 8  # the dev dialogs, two bot turns each
