"""The metrics on hand-made cases where every formula gives a different number: a dialog partly right, a gold
answer at rank 10 and at rank 11, several correct answers."""

from __future__ import annotations

import pytest

from models.examples import TurnExample
from models.metrics import accuracy_report, hits_at_k, percent
from models.movie.examples import MovieExample


def turn(dialog: str, answer: str) -> TurnExample:
    return TurnExample(dialog, "babi-1", "tst", 0, (), (), "q", answer)


def test_per_response_and_per_dialog_accuracy_of_a_partly_right_dialog() -> None:
    examples = [turn("a", "x"), turn("a", "y"), turn("a", "z"), turn("b", "x"), turn("b", "y"), turn("c", "z")]
    predictions = ["x", "wrong", "z", "x", "y", "wrong"]  # a: 2 of 3 right, b: all right, c: none right
    report = accuracy_report(examples, predictions)
    assert report == {"per_response_accuracy": 66.67, "per_dialog_accuracy": 33.33, "turns": 6, "dialogs": 3}
    assert accuracy_report(examples[3:5], predictions[3:5])["per_dialog_accuracy"] == 100.0
    with pytest.raises(ValueError, match="6 examples but 5 predictions"):
        accuracy_report(examples, predictions[:5])


def test_hits_at_k_counts_a_gold_answer_at_rank_10_and_not_at_rank_11() -> None:
    ranked = [f"c{i}" for i in range(1, 13)]  # c1 first
    examples = [turn("a", "c1"), turn("b", "c10"), turn("c", "c11"), turn("d", "missing")]
    rankings = [ranked] * 4
    assert hits_at_k(examples, rankings, 1) == 25.0
    assert hits_at_k(examples, rankings, 10) == 50.0
    assert hits_at_k(examples, rankings, 11) == 75.0
    assert hits_at_k([], [], 10) == 0.0


def test_hits_at_k_takes_any_of_several_correct_answers() -> None:
    example = MovieExample(1, "test", 0, 1, (), "q", ("late", "early"))
    assert hits_at_k([example], [["other", "early", "late"]], 2) == 100.0
    assert hits_at_k([example], [["other", "more", "late"]], 2) == 0.0


def test_percent() -> None:
    assert percent([]) == 0.0 and percent([True, False, False, True]) == 50.0 and percent(iter([1, 0, 0])) == 100 / 3
