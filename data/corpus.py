"""The corpus model of the dialog-bAbI layout: dialogs made of turns and KB result lines.

The model keeps every byte a file holds (raw utterance text, blank lines, the final newline), so that writing
what was read reproduces the file exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

SILENCE = "<SILENCE>"
API_CALL_PREFIX = "api_call"
NO_RESULT = "api_call no result"


# Also read by TensorFlow ops (RE2's full match), where the models serve.
KB_RESULT_PATTERN = r"(\S+) (R_\S+) (\S.*)"
_KB_RESULT = re.compile(KB_RESULT_PATTERN)


def parse_kb_result(text: str) -> tuple[str, str, str] | None:
    """``(entity, attribute, value)`` of a KB result text ``entity R_attribute value``, else None."""
    match = _KB_RESULT.fullmatch(text)
    return (match.group(1), match.group(2), match.group(3)) if match else None


def is_api_call(bot_utterance: str) -> bool:
    """API calls are bot utterances whose first word is ``api_call``."""
    return bot_utterance.split(" ", 1)[0] == API_CALL_PREFIX


def is_silence(user_utterance: str) -> bool:
    """A user turn with nothing said: ``<SILENCE>``, or an empty utterance as in task 6."""
    stripped = user_utterance.strip()
    return stripped == SILENCE or not stripped


@dataclass(frozen=True)
class Turn:
    """One line ``ID user<TAB>bot``: a user utterance and the bot's answer to it."""

    id: int
    user: str
    bot: str

    def render(self) -> str:
        return f"{self.id} {self.user}\t{self.bot}"


@dataclass(frozen=True)
class KBResult:
    """One line ``ID entity R_attribute value`` (or ``ID api_call no result``): an API output.

    The model reads it in its memory but never predicts it.
    """

    id: int
    text: str

    def render(self) -> str:
        return f"{self.id} {self.text}"

    @property
    def is_no_result(self) -> bool:
        return self.text == NO_RESULT

    @property
    def fact(self) -> tuple[str, str, str] | None:
        """``(entity, attribute, value)``, or None for ``api_call no result``."""
        return None if self.is_no_result else parse_kb_result(self.text)


Line = Turn | KBResult


@dataclass(frozen=True)
class Dialog:
    """A dialog: lines with IDs 1, 2, ... and the number of blank lines that follow it in its file."""

    lines: tuple[Line, ...]
    blank_lines_after: int = 1

    @property
    def turns(self) -> list[Turn]:
        return [line for line in self.lines if isinstance(line, Turn)]

    @property
    def kb_results(self) -> list[KBResult]:
        return [line for line in self.lines if isinstance(line, KBResult)]

    @property
    def texts(self) -> list[str]:
        """Every text of the dialog in file order: each turn's user and bot utterances, each KB result line."""
        return [text for line in self.lines
                for text in ((line.user, line.bot) if isinstance(line, Turn) else (line.text,))]

    @classmethod
    def build(cls, items: list[tuple[str, str] | str]) -> Dialog:
        """A dialog from ``(user, bot)`` pairs and KB result strings, numbering the lines from 1."""
        lines: list[Line] = []
        for number, item in enumerate(items, start=1):
            if isinstance(item, tuple):
                lines.append(Turn(number, item[0], item[1]))
            else:
                lines.append(KBResult(number, item))
        return cls(tuple(lines))


@dataclass
class DialogFile:
    """A dialog file: its dialogs, and whether its last line ends with a newline."""

    dialogs: list[Dialog] = field(default_factory=list)
    final_newline: bool = True

    def __iter__(self) -> Iterator[Dialog]:
        return iter(self.dialogs)

    def __len__(self) -> int:
        return len(self.dialogs)


@dataclass
class CandidateFile:
    """The candidate responses, one per line as ``1 text``, in file order."""

    candidates: list[str] = field(default_factory=list)
    final_newline: bool = True


@dataclass(frozen=True)
class KBFact:
    """One knowledge-base fact, a line ``1 entity R_attribute<TAB>value`` of the KB file."""

    entity: str
    attribute: str
    value: str

    def render(self) -> str:
        return f"1 {self.entity} {self.attribute}\t{self.value}"

    def as_result_text(self) -> str:
        """The same fact as it appears in a dialog, as an API output line (without its ID)."""
        return f"{self.entity} {self.attribute} {self.value}"


@dataclass
class KBFile:
    facts: list[KBFact] = field(default_factory=list)
    final_newline: bool = True
