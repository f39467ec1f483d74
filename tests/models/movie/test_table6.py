"""`dialog benchmark` on a Movie Dialog corpus writes Table 6; a directory in neither layout is refused."""

from __future__ import annotations

import re

from click.testing import CliRunner

from pipeline.cli import main


def test_benchmark_writes_table6_for_a_movie_corpus(movies, tmp_path) -> None:
    corpus, _, _ = movies
    out = tmp_path / "table6.md"
    result = CliRunner().invoke(main, ["benchmark", "--data", str(corpus.root), "--out", str(out),
                                        "--epochs", "1"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "| QA system | **" in text and "paper 90.7" in text and "| LSTM | **" in text
    assert "Joint MemN2N against MemN2N trained per task: task 1 " in text and "Not run" not in text
    assert "MemN2N task 4: 1 hop(s)" in text  # the discussion task, ranked among its candidate file
    assert re.search(r"MemN2N task 1: 1 hop\(s\), best epoch 1/1,", text)  # --epochs reaches the models (8 without)
    assert "| MemN2N | **" in text and "MemN2N task 3: 2 hop(s)" in text and "by exchange: exchange 1 " in text
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(main, ["benchmark", "--data", str(empty), "--out", str(out)])
    assert result.exit_code == 1 and "neither the dialog-bAbI nor the Movie Dialog layout" in result.output
