"""The dialog-bAbI reader/writer: exact round trips and a clear error for every malformed line."""

from __future__ import annotations

from pathlib import Path

import pytest

from data import babi_format
from data.babi_format import FormatError
from data.corpus import KBResult, Turn
from tests import FIXTURES

TASK5_LIKE = (
    "1 hi\thello what can i help you with today\n"
    "2 may i have a table in paris\ti'm on it\n"
    "3 <SILENCE>\tapi_call french paris six moderate\n"
    "4 resto_1 R_phone resto_1_phone\n"
    "5 resto_1 R_rating 6\n"
    "6 <SILENCE>\twhat do you think of this option: resto_1\n"
    "\n"
    "1 hello\thello what can i help you with today\n"
    "\n"
)


@pytest.mark.parametrize(
    "text",
    [
        TASK5_LIKE,
        TASK5_LIKE.rstrip("\n"),  # no final newline, no blank line after the last dialog
        TASK5_LIKE + "\n",  # two blank lines after the last dialog
        TASK5_LIKE.replace("\n\n1 hello", "\n1 hello"),  # IDs reset without a blank line
        "1 \t you are welcome\n",  # empty user utterance, bot utterance with a leading space
        "",
    ],
)
def test_dialog_text_round_trips(text: str) -> None:
    assert babi_format.render_dialogs(babi_format.parse_dialogs(text)) == text


def test_parse_dialogs_gives_turns_and_kb_results() -> None:
    dialogs = babi_format.parse_dialogs(TASK5_LIKE).dialogs
    assert len(dialogs) == 2
    first = dialogs[0]
    assert first.lines[0] == Turn(1, "hi", "hello what can i help you with today")
    assert first.lines[3] == KBResult(4, "resto_1 R_phone resto_1_phone")
    assert first.lines[3].fact == ("resto_1", "R_phone", "resto_1_phone")
    assert [turn.id for turn in first.turns] == [1, 2, 3, 6]
    assert babi_format.parse_line("7 api_call no result", "f", 1).fact is None


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "task6-like").iterdir()))
def test_fixture_files_round_trip_byte_for_byte(name: str, tmp_path: Path) -> None:
    source = FIXTURES / "task6-like" / name
    reader, writer = (
        (babi_format.read_candidates, babi_format.write_candidates) if name.endswith("candidates.txt")
        else (babi_format.read_dialogs, babi_format.write_dialogs)
    )
    writer(tmp_path / name, reader(source))
    assert (tmp_path / name).read_bytes() == source.read_bytes()


def test_candidates_keep_text_exactly_and_missing_final_newline() -> None:
    text = "1 i'm on it\n1  you are welcome"
    parsed = babi_format.parse_candidates(text)
    assert parsed.candidates == ["i'm on it", " you are welcome"]
    assert not parsed.final_newline
    assert babi_format.render_candidates(parsed) == text


def test_kb_round_trips() -> None:
    text = "1 resto_1 R_phone\tresto_1_phone\n1 resto_1 R_rating\t6\n"
    parsed = babi_format.parse_kb(text)
    assert [(f.entity, f.attribute, f.value) for f in parsed.facts] == [
        ("resto_1", "R_phone", "resto_1_phone"), ("resto_1", "R_rating", "6")]
    assert babi_format.render_kb(parsed) == text


MALFORMED_DIALOGS = [
    ("hi\thello\n", 1, "expected 'ID text'"),  # no ID
    ("1 hi\thello\n02 a\tb\n", 2, "expected 'ID text'"),  # ID with a leading zero
    ("1 hi\thello\n3 a\tb\n", 2, "ID 3 where 2 was expected"),  # IDs skip
    ("2 hi\thello\n", 1, "first line of a dialog has ID 2"),
    ("1 hi\thello\n2 what do you want\n", 2, "no TAB"),  # bot turn without its TAB
    ("1 hi\thello\tthere\n", 1, "more than one TAB"),
    ("1 hi\t \n", 1, "empty bot utterance"),
    ("1 hi\thello\n\n2 a\tb\n", 3, "blank line inside a dialog"),
    ("\n1 hi\thello\n", 1, "blank line before the first dialog"),
    ("1 hi\thello\r\n", 1, "carriage return"),
    ("1 hi\thello\n  \n", 2, "expected 'ID text'"),  # whitespace-only line
    ("1 resto_1 phone resto_1_phone\n", 1, "no TAB"),  # KB result without its R_ attribute
]


@pytest.mark.parametrize(("text", "line", "message"), MALFORMED_DIALOGS)
def test_malformed_dialog_line_names_file_and_line(text: str, line: int, message: str, tmp_path: Path) -> None:
    path = tmp_path / "dialog-babi-task1-API-calls-trn.txt"
    path.write_bytes(text.encode())
    with pytest.raises(FormatError) as raised:
        babi_format.read_dialogs(path)
    assert raised.value.line == line
    assert message in raised.value.message
    assert str(raised.value).startswith(f"{path}:{line}: ")


def test_bad_encoding_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"1 hi\thello\n2 caf\xe9\tok\n")
    with pytest.raises(FormatError, match=r"bad\.txt:2: not valid UTF-8 \(byte 0xe9\)"):
        babi_format.read_dialogs(path)


@pytest.mark.parametrize(("text", "line"), [("1 ok\nhello\n", 2), ("1 ok\n2 other\n", 2), ("1 \n", 1),
                                           ("1 a\tb\n", 1)])
def test_malformed_candidate_line(text: str, line: int) -> None:
    with pytest.raises(FormatError) as raised:
        babi_format.parse_candidates(text, "cands.txt")
    assert raised.value.line == line


@pytest.mark.parametrize("text", ["1 resto_1 R_phone resto_1_phone\n", "resto_1 R_phone\tx\n",
                                  "1 resto_1 phone\tx\n", "1 resto_1 R_phone\tx\ty\n"])
def test_malformed_kb_line(text: str) -> None:
    with pytest.raises(FormatError, match="kb.txt:1: expected a KB fact"):
        babi_format.parse_kb(text, "kb.txt")
