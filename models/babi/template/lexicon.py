"""The entity lexicon and the delexicalised examples the template model reads.

Entity words and their types come from the KB facts (KB file and the training dialogs' KB result lines) and from
API-call arguments (a position takes the type most of its known values have).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from data.corpus import NO_RESULT, parse_kb_result
from models.babi.dialog_state import DialogStateTracker, StateSpec, api_arguments, argument_kinds, is_result_line
from models.examples import TurnExample

NAME = "name"
SKIPPED_ATTRIBUTES = {"rating"}  # numbers that rank restaurants; kept as words


@dataclass
class EntityLexicon:
    """Entity word -> type, and each restaurant's attributes (type -> value), learned from training data."""

    types: dict[str, str]
    attributes: dict[str, dict[str, str]]

    @classmethod
    def learn(cls, facts: Iterable[tuple[str, str, str]], answers: Iterable[str]) -> EntityLexicon:
        types: dict[str, str] = {}
        attributes: dict[str, dict[str, str]] = defaultdict(dict)
        for entity, attribute, value in facts:
            kind = attribute.removeprefix("R_")
            if kind in SKIPPED_ATTRIBUTES or len(value.split()) != 1:
                continue
            types.setdefault(entity, NAME)
            types.setdefault(value, kind)
            attributes[entity][kind] = value
        # API-call arguments: each position takes the type most of its known values have; its other values too.
        calls = api_arguments(answers)
        by_position = argument_kinds(types, calls)
        for arguments in calls:
            for position, word in enumerate(arguments):
                if by_position[position] and not word.startswith("R_"):
                    types.setdefault(word, by_position[position].most_common(1)[0][0])
        return cls(types, dict(attributes))

    def delexicalise(self, text: str) -> str:
        return " ".join(f"<{self.types[w]}>" if w in self.types else w for w in text.split(" "))

    def slots(self, text: str) -> list[tuple[str, str]]:
        """The (type, value) of each entity word of ``text``, in order."""
        return [(self.types[w], w) for w in text.split(" ") if w in self.types]


def template_line(lexicon: EntityLexicon, text: str, speaker: str) -> str | None:
    """A memory line as the template model reads it: delexicalised; None for a KB result other than a rating
    line (left out)."""
    if is_result_line(speaker, text) and text != NO_RESULT:
        fact = parse_kb_result(text)
        if fact is None or fact[1] != "R_rating":
            return None
    return lexicon.delexicalise(text)


def template_example(lexicon: EntityLexicon, example: TurnExample, state: str = "",
                     lines: dict[tuple[str, str], str | None] | None = None) -> TurnExample:
    """The example as the template model sees it: delexicalised, KB results reduced to their rating lines, and
    the dialog ``state``'s words (:class:`DialogStateTracker`) before the query. ``lines`` caches
    :func:`template_line` across examples: every turn repeats its dialog's history, so most lines recur."""
    lines = {} if lines is None else lines
    memory, speakers = [], []
    for text, speaker in zip(example.memory, example.memory_speaker, strict=True):
        if (text, speaker) not in lines:
            lines[text, speaker] = template_line(lexicon, text, speaker)
        if lines[text, speaker] is not None:
            memory.append(lines[text, speaker])
            speakers.append(speaker)
    query = lexicon.delexicalise(example.query)
    return replace(example, memory=tuple(memory), memory_speaker=tuple(speakers),
                   query=f"{state} {query}" if state else query, answer=lexicon.delexicalise(example.answer))


def template_examples(lexicon: EntityLexicon, state: StateSpec | None, examples: Sequence[TurnExample]
                      ) -> list[TurnExample]:
    """The examples as the template model sees them (:func:`template_example`), the state words computed by the
    same ops as in the SavedModel."""
    words = DialogStateTracker(state).words(examples) if state is not None and examples else [""] * len(examples)
    lines: dict[tuple[str, str], str | None] = {}
    return [template_example(lexicon, e, w, lines) for e, w in zip(examples, words, strict=True)]
