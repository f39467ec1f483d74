"""dialog validate: a generated corpus is valid, and each kind of problem is reported with its file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from data.layout import SHARED_CANDIDATES, SHARED_KB, dialog_file_name
from data.stats import corpus_stats
from data.validate import validate_corpus
from tests import FIXTURES


def test_generated_corpus_is_valid(corpus: Path) -> None:
    report = validate_corpus(corpus)
    assert report.ok, report.format()
    assert report.files_checked == 2 * 4 + 2


def test_corpus_without_kb_is_valid() -> None:
    report = validate_corpus(FIXTURES / "task6-like")
    assert report.ok, report.format()


def test_public_release_mix_task6_does_not_use_the_restaurant_kb(corpus: Path) -> None:
    for path in (FIXTURES / "task6-like").iterdir():
        shutil.copy(path, corpus / path.name)
    report = validate_corpus(corpus)
    assert report.ok, report.format()
    stats = corpus_stats(corpus)
    assert stats["candidates"] == 4212  # the shared set of tasks 1-5, not task 6's
    assert stats["candidate_sets"]["dialog-babi-task6-dstc2-candidates.txt"]["tasks"] == [6]


def test_gold_answer_missing_from_candidates(corpus: Path) -> None:
    path = corpus / dialog_file_name(1, "dev")
    replace_line(path, 2, path.read_text().split("\n")[1].split("\t")[0] + "\ti am not a candidate")
    report = validate_corpus(corpus)
    assert [(Path(p.path).name, p.line) for p in report.problems] == [(path.name, 2)]
    assert "not in the candidate set: 'i am not a candidate'" in report.format()


def test_candidates_with_trailing_spaces_are_named_as_such(corpus: Path) -> None:
    """A candidates file saved with trailing spaces made every gold answer 'not in the candidate set', and the
    whitespace was never mentioned."""
    path = corpus / SHARED_CANDIDATES
    lines = path.read_text().split("\n")
    spaced = next(i for i, line in enumerate(lines) if line == "1 i'm on it")
    lines[spaced] += "  "
    path.write_text("\n".join(lines))
    text = validate_corpus(corpus).format(max_per_file=1000)
    assert f"{path.name}:{spaced + 1}" in text and "candidate with leading or trailing spaces" in text
    assert "not in the candidate set: \"i'm on it\" (the candidate \"i'm on it  \" differs in spaces only)" in text


def test_kb_result_with_unknown_entity_or_wrong_fact(corpus: Path) -> None:
    path = corpus / dialog_file_name(3, "trn")
    first = path.read_text().split("\n")[0]
    entity = first.split()[1]
    replace_line(path, 1, "1 resto_nowhere R_phone resto_nowhere_phone")
    replace_line(path, 2, f"2 {entity} R_address somewhere_else")
    report = validate_corpus(corpus)
    messages = [(p.line, p.message) for p in report.problems]
    assert messages == [(1, "KB result names an entity the KB does not have: 'resto_nowhere'"),
                        (2, f"KB result is not a fact of the KB: '{entity} R_address somewhere_else'")]
    # the corpus is usable, so these are warnings (as the public release's tst-OOV KB disagreements are)
    assert report.ok and report.passes() and not report.passes(strict=True)
    assert [p.is_warning for p in report.problems] == [True, True]
    text = report.format()
    assert text.startswith("OK:") and "0 errors, 2 warnings" in text
    assert f"{path}: KB result is not a fact of the KB: 1 (first: {path}:2:" in text


def test_missing_split_and_missing_candidates(corpus: Path) -> None:
    (corpus / dialog_file_name(1, "tst-OOV")).unlink()
    (corpus / SHARED_CANDIDATES).unlink()
    report = validate_corpus(corpus)
    text = report.format()
    assert not report.ok
    assert "task 1: missing split tst-OOV" in text
    assert "task 3: no candidates file" in text
    partial = validate_corpus(corpus, partial=True)
    assert "missing split" not in partial.format()


def test_malformed_line_is_reported_with_its_line(corpus: Path) -> None:
    path = corpus / dialog_file_name(1, "trn")
    replace_line(path, 3, "3 no tab here")
    problems = validate_corpus(corpus).problems
    assert [(Path(p.path).name, p.line) for p in problems] == [(path.name, 3)]
    assert "no TAB" in problems[0].message


def test_duplicate_candidate_and_bad_kb_line(corpus: Path) -> None:
    with (corpus / SHARED_CANDIDATES).open("a") as handle:
        handle.write("1 i'm on it\n")
    replace_line(corpus / SHARED_KB, 5, "1 broken")
    report = validate_corpus(corpus)
    found = {(Path(p.path).name, p.message.split(":")[0], p.is_warning) for p in report.problems}
    assert (SHARED_KB, "expected a KB fact as '1 entity R_attribute<TAB>value'", False) in found
    duplicates = [p for p in report.warnings if Path(p.path).name == SHARED_CANDIDATES]
    assert [(p.kind, p.message) for p in duplicates] == [("duplicate candidate",
                                                          "duplicate candidate: \"i'm on it\"")]


def test_not_a_corpus(tmp_path: Path) -> None:
    assert "no dialog files" in validate_corpus(tmp_path).format()


def test_validate_exits_0_with_warnings_and_1_with_strict(corpus: Path) -> None:
    from click.testing import CliRunner

    from pipeline.cli import main

    path = corpus / dialog_file_name(3, "trn")
    entity = path.read_text().split("\n")[0].split()[1]
    replace_line(path, 2, f"2 {entity} R_number six")  # a KB file and a dialog that disagree, as in the release
    plain = CliRunner().invoke(main, ["validate", str(corpus)])
    assert plain.exit_code == 0 and "1 warnings" in plain.output, plain.output
    strict = CliRunner().invoke(main, ["validate", "--strict", str(corpus)])
    assert strict.exit_code == 1 and strict.output.startswith("INVALID:"), strict.output


def test_a_split_that_is_a_directory_or_a_broken_link_and_a_kb_that_is_a_directory(corpus: Path) -> None:
    (corpus / dialog_file_name(1, "dev")).unlink()
    (corpus / dialog_file_name(1, "dev")).mkdir()
    (corpus / dialog_file_name(1, "tst")).unlink()
    (corpus / dialog_file_name(1, "tst")).symlink_to(corpus / "nowhere.txt")
    (corpus / SHARED_KB).unlink()
    (corpus / SHARED_KB).mkdir()
    report = validate_corpus(corpus)
    found = {(Path(p.path).name, p.message) for p in report.errors}
    refused = "is a directory, not a regular file; only regular files are read"
    assert (dialog_file_name(1, "dev"), refused) in found
    assert (dialog_file_name(1, "tst"), "cannot be read (No such file or directory)") in found
    assert (SHARED_KB, refused) in found
    assert not report.ok


def test_a_named_pipe_or_a_device_as_a_split_is_named_not_read(corpus: Path) -> None:
    """A FIFO blocked validate for ever; a link to /dev/zero read until memory ran out."""
    import os

    os.replace(corpus / dialog_file_name(1, "dev"), corpus / "kept.txt")
    os.mkfifo(corpus / dialog_file_name(1, "dev"))
    (corpus / dialog_file_name(1, "tst")).unlink()
    (corpus / dialog_file_name(1, "tst")).symlink_to("/dev/zero")
    found = {(Path(p.path).name, p.message) for p in validate_corpus(corpus).errors}
    assert (dialog_file_name(1, "dev"), "is a named pipe (FIFO), not a regular file; only regular files are read") \
        in found
    assert (dialog_file_name(1, "tst"), "is a character device (a symbolic link to /dev/zero), not a regular file; "
                                        "only regular files are read") in found


def test_a_nul_byte_inside_an_utterance_is_named(corpus: Path) -> None:
    path = corpus / dialog_file_name(1, "trn")
    replace_line(path, 3, path.read_text().split("\n")[2].replace(" ", " \0", 1))
    assert [(Path(p.path).name, p.line, p.message) for p in validate_corpus(corpus).errors] == [
        (path.name, 3, "a NUL byte (0x00) inside the text")]


@pytest.fixture()
def corpus(small_corpus: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "corpus"
    shutil.copytree(small_corpus, copy)
    return copy


def replace_line(path: Path, number: int, new: str) -> None:
    lines = path.read_text().split("\n")
    lines[number - 1] = new
    path.write_text("\n".join(lines))
