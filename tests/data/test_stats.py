"""dialog stats: Table 1's counts, exactly, of fixtures and of a generated corpus."""

from __future__ import annotations

from pathlib import Path

from data.babi.table1 import format_table
from data.layout import SHARED_CANDIDATES
from data.stats import corpus_stats
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
    import pytest

    from data.babi_format import FormatError
    from data.movie.tasks import MoviePlan, generate

    generate(MoviePlan(seed=1, scale="tiny"), tmp_path)
    path = tmp_path / "task1_qa" / "task1_qa_train.txt"
    lines = path.read_text().splitlines()
    lines[2] = "garbage line without id"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match="task1_qa_train.txt:3: expected 'ID text<TAB>answers'"):
        corpus_stats(tmp_path)
