"""Read and write the dialog-bAbI text layout: dialog files, the candidates file and the KB file.

Reading is strict (a malformed line raises :class:`FormatError` naming the file and line) and exact
(``render_*(parse_*(text)) == text`` for every file it accepts). Writing goes to a temporary name that is
renamed into place, so an interrupted write never leaves a half-written file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from data.atomic import FileSystem, write_text_atomic
from data.corpus import (
    NO_RESULT,
    CandidateFile,
    Dialog,
    DialogFile,
    KBFact,
    KBFile,
    KBResult,
    Line,
    Turn,
    parse_kb_result,
)
from data.reading import FormatError, read_bytes

_ID_LINE = re.compile(r"([1-9][0-9]*) (.*)", re.DOTALL)
_CANDIDATE_LINE = re.compile(r"1 (.+)", re.DOTALL)
_KB_LINE = re.compile(r"1 (\S+) (R_\S+)\t(.+)", re.DOTALL)


# ---------------------------------------------------------------------------------------------- decoding


def decode(data: bytes, path: str | os.PathLike[str]) -> str:
    """UTF-8 text of a file's bytes as :func:`data.reading.read_bytes` returns them (a NUL byte already refused
    there: no utterance holds one, and the featuriser's strings cannot), or a FormatError naming the line with the
    first undecodable byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FormatError(path, line, f"not valid UTF-8 (byte 0x{data[error.start]:02x})") from None


def _split_lines(text: str, path: str | os.PathLike[str]) -> tuple[list[str], bool]:
    """The lines of a text without their terminators, and whether the text ends with a newline."""
    if not text:
        return [], True
    final_newline = text.endswith("\n")
    lines = text.split("\n")
    if final_newline:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if "\r" in line:
            raise FormatError(path, number, "carriage return in line (CRLF line endings are not the layout)")
    return lines, final_newline


def _render_lines(lines: Iterable[str], final_newline: bool) -> str:
    text = "".join(f"{line}\n" for line in lines)
    return text if final_newline or not text else text[:-1]


# ---------------------------------------------------------------------------------------------- dialogs


def parse_line(raw: str, path: str | os.PathLike[str], number: int) -> Line:
    """One non-blank line of a dialog file: a turn ``ID user<TAB>bot`` or a KB result ``ID entity R_x value``."""
    match = _ID_LINE.fullmatch(raw)
    if match is None:
        raise FormatError(path, number, f"expected 'ID text' (a positive integer, one space, the text): {raw!r}")
    line_id, rest = int(match.group(1)), match.group(2)
    if "\t" in rest:
        user, bot = rest.split("\t", 1)
        if "\t" in bot:
            raise FormatError(path, number, "more than one TAB: a turn is 'ID user<TAB>bot'")
        if not bot.strip():
            raise FormatError(path, number, "empty bot utterance after the TAB")
        return Turn(line_id, user, bot)
    if rest == NO_RESULT or parse_kb_result(rest) is not None:
        return KBResult(line_id, rest)
    raise FormatError(
        path,
        number,
        "no TAB: a turn needs 'user<TAB>bot', and a line without a TAB must be a KB result "
        f"('entity R_attribute value' or '{NO_RESULT}'): {rest!r}",
    )


def parse_dialogs(text: str, path: str | os.PathLike[str] = "<text>") -> DialogFile:
    """Dialogs of a dialog file. IDs start at 1 in each dialog and go up by one; a reset to 1 starts a new one."""
    raw_lines, final_newline = _split_lines(text, path)
    dialogs: list[Dialog] = []
    current: list[Line] = []
    blanks = 0
    for number, raw in enumerate(raw_lines, start=1):
        if not raw:
            if not current:
                raise FormatError(path, number, "blank line before the first dialog")
            blanks += 1
            continue
        line = parse_line(raw, path, number)
        if line.id == 1:
            if current:
                dialogs.append(Dialog(tuple(current), blanks))
            current, blanks = [line], 0
            continue
        if not current:
            raise FormatError(path, number, f"the first line of a dialog has ID {line.id}, expected 1")
        expected = current[-1].id + 1
        if line.id != expected:
            raise FormatError(path, number, f"ID {line.id} where {expected} was expected (IDs must not skip)")
        if blanks:
            raise FormatError(path, number, f"blank line inside a dialog: ID {line.id} continues it after the blank")
        current.append(line)
    if current:
        dialogs.append(Dialog(tuple(current), blanks))
    return DialogFile(dialogs, final_newline)


def render_dialogs(dialog_file: DialogFile) -> str:
    lines: list[str] = []
    for dialog in dialog_file.dialogs:
        lines.extend(line.render() for line in dialog.lines)
        lines.extend([""] * dialog.blank_lines_after)
    return _render_lines(lines, dialog_file.final_newline)


# ---------------------------------------------------------------------------------------------- candidates


def parse_candidates(text: str, path: str | os.PathLike[str] = "<text>") -> CandidateFile:
    """Candidates, one per line as ``1 text`` (the text is kept exactly, spaces included)."""
    raw_lines, final_newline = _split_lines(text, path)
    candidates = []
    for number, raw in enumerate(raw_lines, start=1):
        match = _CANDIDATE_LINE.fullmatch(raw)
        if match is None or not match.group(1).strip():
            raise FormatError(path, number, f"expected a candidate as '1 text': {raw!r}")
        if "\t" in raw:
            raise FormatError(path, number, "TAB in a candidate")
        candidates.append(match.group(1))
    return CandidateFile(candidates, final_newline)


def render_candidates(candidate_file: CandidateFile) -> str:
    return _render_lines((f"1 {text}" for text in candidate_file.candidates), candidate_file.final_newline)


# ---------------------------------------------------------------------------------------------- KB


def parse_kb(text: str, path: str | os.PathLike[str] = "<text>") -> KBFile:
    """Knowledge-base facts, one per line as ``1 entity R_attribute<TAB>value``."""
    raw_lines, final_newline = _split_lines(text, path)
    facts = []
    for number, raw in enumerate(raw_lines, start=1):
        match = _KB_LINE.fullmatch(raw)
        if match is None or "\t" in match.group(3):
            raise FormatError(path, number, f"expected a KB fact as '1 entity R_attribute<TAB>value': {raw!r}")
        facts.append(KBFact(*match.groups()))
    return KBFile(facts, final_newline)


def render_kb(kb_file: KBFile) -> str:
    return _render_lines((fact.render() for fact in kb_file.facts), kb_file.final_newline)


# ---------------------------------------------------------------------------------------------- files


def read_text(path: str | os.PathLike[str], fs: FileSystem | None = None) -> str:
    """The file's text (through ``fs`` when given: a corpus on ``gs://`` read with TensorFlow's file systems); a path
    that cannot be read (a directory, a broken link, a named pipe, a device) or a line past the bound is a
    FormatError naming it (``data.reading``)."""
    return decode(read_bytes(path, fs), path)


def read_dialogs(path: str | os.PathLike[str]) -> DialogFile:
    return parse_dialogs(read_text(path), path)


def read_candidates(path: str | os.PathLike[str]) -> CandidateFile:
    return parse_candidates(read_text(path), path)


def read_kb(path: str | os.PathLike[str]) -> KBFile:
    return parse_kb(read_text(path), path)


def write_dialogs(path: str | os.PathLike[str], dialog_file: DialogFile) -> None:
    write_text_atomic(path, render_dialogs(dialog_file))


def write_candidates(path: str | os.PathLike[str], candidate_file: CandidateFile) -> None:
    write_text_atomic(path, render_candidates(candidate_file))


def write_kb(path: str | os.PathLike[str], kb_file: KBFile) -> None:
    write_text_atomic(path, render_kb(kb_file))
