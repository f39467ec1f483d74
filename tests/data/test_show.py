"""``dialog show``: the dialogs of either layout as a person reads them, and one line for what is not there."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from data.babi_format import read_dialogs
from data.movie.tasks import MoviePlan, generate
from pipeline.cli import main


def test_a_babi_dialog_is_shown_line_by_line_with_its_api_results(small_corpus: Path) -> None:
    result = CliRunner().invoke(main, ["show", str(small_corpus), "--task", "3", "--split", "dev", "--dialog", "1"])
    assert result.exit_code == 0, result.output
    (dialog_file,) = small_corpus.glob("dialog-babi-task3-*-dev.txt")
    dialog = read_dialogs(dialog_file).dialogs[1]
    shown = result.output.splitlines()
    assert shown[0] == f"task 3 dev dialog 1 ({dialog_file})"
    assert [line[:6] for line in shown[1:] if line] == [
        kind for line in dialog.lines for kind in (("  user", "  bot ") if hasattr(line, "bot") else ("  api ",))]
    assert f"  bot   {dialog.turns[-1].bot}" in shown and f"  api   {dialog.kb_results[0].text}" in shown


def test_movie_dialogs_are_shown_with_their_answers(tmp_path: Path) -> None:
    generate(MoviePlan(seed=1, scale="tiny"), tmp_path)
    result = CliRunner().invoke(main, ["show", str(tmp_path), "--task", "3", "--split", "tst", "--count", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.count("task 3 tst dialog ") == 2 and "task3_qarecs_test.txt" in result.output
    assert result.output.count("  user  ") == result.output.count("  bot   ") >= 2


def test_what_is_not_there_is_one_line(small_corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for arguments, message in ((["--task", "9"], "no trn file of task 9"),
                               (["--task", "1", "--dialog", "10000"], "task 1 trn has no dialog 10000"),
                               (["--task", "1", "--split", "tst-OOT"], "no tst-OOT file of task 1")):
        result = runner.invoke(main, ["show", str(small_corpus), *arguments])
        assert result.exit_code == 1 and message in result.output, result.output
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "dialog-babi-task1-API-calls-trn.txt").write_text("1 hi\thello\nx oops\n")
    result = runner.invoke(main, ["show", str(broken), "--task", "1"])
    assert result.exit_code == 1 and "dialog-babi-task1-API-calls-trn.txt:2" in result.output, result.output
