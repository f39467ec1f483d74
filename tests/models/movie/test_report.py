"""Table 6 as Markdown: ours beside the paper's, n/a where a method has nothing to offer, and the notes."""

from __future__ import annotations

from models.movie.examples import MovieExample
from models.movie.report import Row, by_exchange, format_table6


def test_each_row_puts_ours_beside_the_papers_and_the_notes_follow() -> None:
    rows = [Row("QA system", {1: 95.0}, 1.0, ["QA note"]),
            Row("MemN2N", {1: 80.0, 2: 30.0}, 2.0, ["MemN2N note"]),
            Row("Joint MemN2N", {1: 82.5, 2: 25.0}, 3.0, [])]
    lines = format_table6(rows).splitlines()
    assert lines[2] == "| Method | QA task | Recs task | QA+Recs task | Reddit task | seconds |"
    assert lines[4] == "| QA system | **95.0** · paper 90.7 | n/a | n/a | n/a | 1.0 |"
    assert lines[5] == ("| MemN2N | **80.0** · paper 79.3 | **30.0** · paper 28.6 | n/a · paper 81.7 "
                        "| n/a · paper 29.2 | 2.0 |")
    assert lines[8:] == ["- QA note", "- MemN2N note", "- Joint MemN2N against MemN2N trained per task: task 1 +2.5, "
                         "task 2 -5.0", "- Not run: SVD, IR, LSTM, Supervised embeddings, Joint supervised embeddings."]


def test_by_exchange_scores_each_position_in_the_dialog() -> None:
    examples = [MovieExample(3, "test", dialog, exchange, (), "q", ("a",)) for dialog in (0, 1) for exchange in (1, 2)]
    ranked = [["a"], ["b"], ["a"], ["a"]]
    assert by_exchange(examples, ranked, 1) == "exchange 1 100.0, exchange 2 50.0"
