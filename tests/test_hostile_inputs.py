"""What a hostile or unlucky user gives the command line: files that are not regular files, a corpus being
replaced while read, outputs that name the command's inputs, sizes no machine holds. Each case once hung, ran out
of memory, deleted or overwrote what the command did not write, or passed in silence."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from data.babi.generation import GenerationPlan, generate
from data.layout import dialog_file_name
from pipeline.cli import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "corpus"
    generate(GenerationPlan(seed=0, dialogs_per_split=2, tasks=(1,)), out, runner="local")
    return out


@contextlib.contextmanager
def _planted(path: Path, kind: str) -> Iterator[None]:
    """``path`` replaced by a FIFO or a link to /dev/zero while the block runs. A FIFO is opened for writing after a
    generous bound, so a reader that blocks on it fails its test instead of hanging the suite."""
    kept = path.with_name(path.name + ".kept")
    os.replace(path, kept)
    done = threading.Event()
    if kind == "fifo":
        os.mkfifo(path)

        def unblock() -> None:
            if not done.wait(120):
                with open(path, "w"):
                    pass
        threading.Thread(target=unblock, daemon=True).start()
    else:
        path.symlink_to("/dev/zero")
    try:
        yield
    finally:
        done.set()
        path.unlink()
        os.replace(kept, path)


KIND = {"fifo": "is a named pipe (FIFO), not a regular file", "zero": "is a character device (a symbolic link to "
        "/dev/zero), not a regular file"}


@pytest.mark.parametrize("kind", sorted(KIND))
def test_a_split_that_is_not_a_regular_file_is_named_by_every_reader(corpus: Path, kind: str) -> None:
    dev = corpus / dialog_file_name(1, "dev")
    runner = CliRunner()
    with _planted(dev, kind):
        for command in (["validate", str(corpus)], ["stats", str(corpus)],
                        ["show", str(corpus), "--task", "1", "--split", "dev"]):
            result = runner.invoke(main, command)
            assert result.exit_code == 1 and f"{dev}: {KIND[kind]}" in result.output, (command, result.output)
        kb = corpus / "dialog-babi-kb-all.txt"
    with _planted(kb, kind):
        result = runner.invoke(main, ["chat", "--model", str(corpus), "--kb", str(kb)], input="")
        assert result.exit_code == 1 and f"{kb}: {KIND[kind]}" in result.output, result.output


def test_train_refuses_a_split_that_is_a_named_pipe_before_training(corpus: Path, tmp_path: Path) -> None:
    dev = corpus / dialog_file_name(1, "dev")
    with _planted(dev, "fifo"):
        result = CliRunner().invoke(main, ["train", "--data", str(corpus), "--task", "1", "--epochs", "1",
                                           "--out", str(tmp_path / "model")])
    assert result.exit_code == 1 and f"{dev}: {KIND['fifo']}" in result.output, result.output
    assert not (tmp_path / "model").exists()


def test_readers_never_read_a_corpus_being_replaced_and_writers_wait_for_no_reader(corpus: Path) -> None:
    from data.atomic import one_reader, one_writer

    runner = CliRunner()
    with one_writer(corpus):  # a generate or convert replacing it
        for command in (["validate", str(corpus)], ["stats", str(corpus)], ["show", str(corpus), "--task", "1"]):
            result = runner.invoke(main, command)
            assert result.exit_code == 2 and f"{corpus} is being written by another process" in " ".join(
                result.output.split()), result.output
    with one_reader(corpus):  # a validate or a train reading it
        result = runner.invoke(main, ["generate", "restaurant", "--out", str(corpus), "--dialogs", "2", "--tasks", "1",
                                      "--runner", "local", "--seed", "3"])
        assert result.exit_code == 1 and f"{corpus} is being read by another process" in result.output
        assert runner.invoke(main, ["validate", str(corpus)]).exit_code == 0  # readers do not exclude each other
    assert runner.invoke(main, ["validate", str(corpus)]).exit_code == 0


def test_a_corpus_generated_over_another_says_what_it_replaced(tmp_path: Path) -> None:
    runner, out = CliRunner(), tmp_path / "corpus"
    command = ["generate", "restaurant", "--out", str(out), "--dialogs", "2", "--tasks", "1", "--runner", "local"]
    assert "already in" not in runner.invoke(main, command).output
    again = runner.invoke(main, command)
    assert "different content" not in again.output and "6 files already in" in again.output  # same seed and size
    other = runner.invoke(main, [*command, "--seed", "5"])
    assert other.exit_code == 0
    assert f"replaced 5 files of the corpus already in {out} with different content" in other.output, other.output


def test_outputs_that_name_an_input_are_refused(corpus: Path, tmp_path: Path) -> None:
    split = corpus / dialog_file_name(1, "trn")
    before = split.read_bytes()
    for command, option in ((["benchmark", "--data", str(corpus), "--out", str(split)], "--out"),
                            (["train", "--data", str(corpus), "--task", "1", "--out", str(corpus.parent)], "--out"),
                            (["pipeline", "--data", str(corpus), "--root", str(corpus)], "--root")):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2 and option in result.output and str(corpus) in " ".join(
            result.output.split()), (command, result.output)
    assert split.read_bytes() == before and sorted(p.name for p in corpus.parent.iterdir()) == ["corpus"]


@pytest.mark.parametrize(("command", "message"), [
    (["banking", "--dialogs", "100000000"], "ask for fewer --dialogs, --dev-dialogs or --test-dialogs"),
    (["restaurant", "--dialogs", "100000000"], "ask for fewer --dialogs or --tasks"),
])
def test_a_corpus_no_disk_holds_is_refused_with_its_estimate_before_any_work(tmp_path: Path, command: list[str],
                                                                             message: str) -> None:
    result = CliRunner().invoke(main, ["generate", *command, "--out", str(tmp_path / "c")])
    assert result.exit_code == 1 and "the corpus would take about" in result.output and message in " ".join(
        result.output.split()), result.output
    assert not (tmp_path / "c").exists()


def test_the_banking_and_movie_estimates_are_near_what_is_written(tmp_path: Path) -> None:
    """Within a quarter of the bytes really written (the refusals above rest on them)."""
    from data.banking.generation import BankingPlan
    from data.banking.generation import estimated_bytes as banking_bytes
    from data.banking.generation import generate as generate_banking
    from data.movie.tasks import MoviePlan
    from data.movie.tasks import estimated_bytes as movie_bytes
    from data.movie.tasks import generate as generate_movies

    banking, movies = BankingPlan(1, 20, 5, 5), MoviePlan(1, "tiny")
    generate_banking(banking, tmp_path / "banking")
    generate_movies(movies, tmp_path / "movies", runner="local")
    for estimate, written in ((banking_bytes(banking), sum(p.stat().st_size for p in (tmp_path / "banking").iterdir()
                                                           if "candidates" not in p.name)),
                              (movie_bytes(movies), sum(p.stat().st_size for p in (tmp_path / "movies").glob("task*/*")
                                                        if "cand" not in p.name))):
        assert 0.75 * written <= estimate <= 1.25 * written, (estimate, written)


def test_entries_that_are_not_files_are_named_not_taken_as_absent(tmp_path: Path) -> None:
    """A FIFO task file was a "missing split", a KB that is a device or a directory silently skipped (validate OK, a
    QA row of n/a), banking labels that are /dev/zero made stats drop the section."""
    from data.banking.generation import BankingPlan
    from data.banking.generation import generate as generate_banking
    from data.movie.tasks import MoviePlan
    from data.movie.tasks import generate as generate_movies

    runner = CliRunner()
    movies, banking = tmp_path / "movies", tmp_path / "banking"
    generate_movies(MoviePlan(0, "tiny"), movies, runner="local")
    generate_banking(BankingPlan(0, 3, 2, 2), banking)
    train, kb = movies / "task1_qa" / "task1_qa_train.txt", movies / "movie_kb.txt"
    labels = banking / "dialog-babi-task7-banking-labels.jsonl"
    with _planted(train, "fifo"):
        result = runner.invoke(main, ["validate", str(movies)])
        assert result.exit_code == 1 and f"{train}: {KIND['fifo']}" in result.output, result.output
    with _planted(kb, "zero"):
        result = runner.invoke(main, ["validate", str(movies)])
        assert result.exit_code == 1 and f"{kb}: {KIND['zero']}" in result.output, result.output
    with _planted(labels, "zero"):
        for command in (["stats", str(banking)], ["validate", str(banking)]):
            result = runner.invoke(main, command)
            assert result.exit_code == 1 and f"{labels}: {KIND['zero']}" in result.output, (command, result.output)


def test_a_refused_file_met_inside_a_table_run_is_one_line(corpus: Path, tmp_path: Path) -> None:
    trn = corpus / dialog_file_name(1, "trn")
    with _planted(trn, "fifo"):
        result = CliRunner().invoke(main, ["benchmark", "--data", str(corpus), "--out", str(tmp_path / "t.md"),
                                           "--methods", "rule_based", "--tasks", "1", "--epochs", "1", "--jobs", "1"])
    assert result.exit_code == 1 and result.output.strip().endswith(f"{trn}: {KIND['fifo']}; only regular files "
                                                                      "are read"), result.output
    assert "Traceback" not in result.output
