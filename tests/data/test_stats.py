"""dialog stats: Table 1's counts, exactly, of fixtures and of a generated corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from data.babi.table1 import format_table
from data.banking.generation import BankingPlan
from data.banking.generation import generate as generate_banking
from data.layout import BANKING_TASK, SHARED_CANDIDATES, task_labels_name
from data.stats import corpus_stats, movie_directory_stats
from data.validate import validate_corpus
from pipeline.cli import main
from tests import FIXTURES


def test_stats_counts_table1_exactly() -> None:
    stats = corpus_stats(FIXTURES / "task6-like")
    task = stats["tasks"]["6"]
    # 4 dialogs: 17 turns, of which 8 user turns with words (no <SILENCE>, no empty one), 7 KB result lines.
    assert task["dialogs"] == {"dev": 1, "trn": 2, "tst": 1}
    assert (task["user_utterances"], task["bot_utterances"], task["api_outputs"]) == (2.0, 4.25, 1.75)
    assert task["utterances"] == 8.0
    assert stats["candidates"] == 7
    assert stats["vocabulary_size"] == task["vocabulary_size"] == 46
    assert "T6" in format_table(stats)


def test_stats_of_a_generated_corpus(small_corpus: Path) -> None:
    stats = corpus_stats(small_corpus)
    assert set(stats["tasks"]) == {"1", "3"}
    assert stats["candidates"] == 4212
    assert stats["tasks"]["1"]["api_outputs"] == 0
    assert stats["tasks"]["3"]["api_outputs"] >= 21  # at least 3 restaurants of 7 facts
    assert stats["candidate_sets"] == {SHARED_CANDIDATES: {"tasks": [1, 3], "vocabulary_size":
                                                           stats["vocabulary_size"], "candidates": 4212}}


def test_a_movie_corpus_with_one_bad_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    """It said there was no task file at all: the bad line's FormatError was taken for a failed discovery."""
    from data.babi_format import FormatError
    from data.movie.tasks import MoviePlan, generate

    generate(MoviePlan(seed=1, scale="tiny"), tmp_path)
    path = tmp_path / "task1_qa" / "task1_qa_train.txt"
    lines = path.read_text().splitlines()
    lines[2] = "garbage line without id"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match="task1_qa_train.txt:3: expected 'ID text<TAB>answers'"):
        movie_directory_stats(tmp_path)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("intent", 5, '"intent" is 5: expected a non-empty string'),
    ("dialog", "1", '"dialog" is "1": expected a whole number from 0'),
    ("challenge", "typo", '"challenge" is "typo": expected one of none, turn_compression, new_api'),
    ("multiple", "no", '"multiple" is "no": expected true or false'),
])
def test_banking_labels_of_the_wrong_type_fail_stats_as_they_fail_validate(
        tmp_path: Path, field: str, value: object, message: str) -> None:
    """stats printed a label's 5 as an intent, and exited 0, where validate's checks should refuse the file: both
    now read the sidecar through one check and stop with one line naming the file and line."""
    generate_banking(BankingPlan(0, 2, 1, 1), tmp_path)
    sidecar = tmp_path / task_labels_name(BANKING_TASK)
    lines = sidecar.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), field: value})
    sidecar.write_text("\n".join(lines) + "\n")
    (problem,) = validate_corpus(tmp_path).errors
    assert str(problem).startswith(f"{sidecar}:2: {message}")
    result = CliRunner().invoke(main, ["stats", str(tmp_path)])
    assert (result.exit_code, result.output) == (1, f"Error: {problem}\n")


def test_stats_checks_that_the_banking_labels_cover_the_dialogs_as_validate_does(tmp_path: Path) -> None:
    generate_banking(BankingPlan(0, 2, 1, 1), tmp_path)
    sidecar = tmp_path / task_labels_name(BANKING_TASK)
    sidecar.write_text("".join(sidecar.read_text().splitlines(keepends=True)[1:]))  # trn dialog 0 loses its label
    (problem,) = validate_corpus(tmp_path).errors
    with pytest.raises(ValueError, match=re.escape(str(problem))):
        corpus_stats(tmp_path)
