"""The registry of papers: which paper a corpus is, asked in one place."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate
from data.banking.generation import BankingPlan
from data.banking.generation import generate as generate_banking
from data.movie.tasks import MoviePlan
from data.movie.tasks import generate as generate_movies
from models import papers


def test_each_corpus_is_looked_up_as_its_papers(tmp_path: Path) -> None:
    babi, banking, movies = papers.get("babi"), papers.get("banking"), papers.get("movie")
    assert list(papers.papers()) == ["movie", "banking", "babi"]  # the lookup order: the built-in ones
    generate(GenerationPlan(seed=0, dialogs_per_split=1, tasks=(1, 2)), tmp_path / "mixed", runner="local")
    generate_banking(BankingPlan(seed=0, train_dialogs=1, dev_dialogs=1, test_dialogs=1), tmp_path / "mixed")
    assert papers.present(tmp_path / "mixed") == [(banking, (7,)), (babi, (1, 2))]
    assert papers.of_corpus(tmp_path / "mixed", (2,)) == (babi, (2,))
    assert papers.of_corpus(tmp_path / "mixed", (7,)) == (banking, (7,))
    with pytest.raises(ValueError, match=r"holds tasks of several papers: banking .*\(task 7\); dialog bAbI .*"
                                         r"\(task 1, 2\); choose one paper's with --tasks"):
        papers.of_corpus(tmp_path / "mixed")
    with pytest.raises(ValueError, match=r"has no files of task 3 \(it holds"):
        papers.held(tmp_path / "mixed", (1, 3))
    generate_movies(MoviePlan(seed=0, scale="tiny"), tmp_path / "movies")
    assert papers.of_corpus(tmp_path / "movies") == (movies, (1, 2, 3, 4))
    (tmp_path / "empty").mkdir()
    for nothing in (tmp_path / "empty", tmp_path / "missing"):
        with pytest.raises(FileNotFoundError, match="no task of any paper's layout"):
            papers.of_corpus(nothing)


def test_a_paper_is_registered_once_and_with_flags_the_tables_know() -> None:
    babi = papers.get("babi")
    assert papers.register(babi) is babi  # its module imported again: the same object
    with pytest.raises(ValueError, match="paper 'babi' is registered twice"):
        papers.register(replace(babi))
    with pytest.raises(ValueError, match=r"unknown table flags \['epochs'\]"):
        papers.register(replace(babi, name="other", table_flags=frozenset({"epochs"})))
    with pytest.raises(ValueError, match="unknown paper 'nope'; choose from"):
        papers.get("nope")


def test_every_profile_puts_the_product_model_first_with_a_method_of_its_paper() -> None:
    from models import methods

    for paper in papers.papers().values():
        for name, profile in paper.profiles.items():
            products = profile.products()
            assert products and name == profile.name, paper.name
            assert {p.method for p in products} <= set(methods.names(paper.name)), (paper.name, name)
            assert len({p.slot for p in products}) == len(products) == len({p.component for p in products})


def test_a_paper_module_that_cannot_be_imported_is_one_line_in_every_command(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from pipeline.cli import main

    monkeypatch.setenv(papers.PAPERS_VARIABLE, "no_such.paper")
    with pytest.raises(ValueError, match="paper module 'no_such.paper' cannot be imported"):
        papers.papers()
    generate(GenerationPlan(seed=0, dialogs_per_split=1, tasks=(1,)), tmp_path, runner="local")
    for command in (["validate", str(tmp_path)], ["train", "--data", str(tmp_path), "--task", "1", "--out",
                                                  str(tmp_path / "m")]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 1 and result.output.startswith("Error: paper module 'no_such.paper'"), result.output
