"""What kind of answer a bot turn is (API call, offer, contact detail, slot question, ...), for accuracy by kind.

A single per-response figure hides where a model fails: on task 6 (DSTC2) greetings and phone numbers are easy
and make up a large share of the turns, while API calls, offers and slot questions are where models part ways
and where dev and test differ. The kinds are read from the gold answer's wording, in the order below, with
patterns that hold for the DSTC2 conversion and for the simulator's tasks 1-5. They are for analysis only: no
model reads them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence

from models.examples import TurnExample
from models.metrics import percent

# (kind, pattern on the lower-cased answer), tried in order; the first match wins, "other" when none does.
KIND_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("api_call", r"^api_call\b"),
    ("no_match", r"\bthere is no\b|\bno restaurant\b"),
    ("contact", r"_(phone|address|post_?code)\b|\bphone number\b|\bpost ?code\b|^sure , .* is on "),
    ("greeting_goodbye", r"^hello\b|\bwelcome\b|\bgoodbye\b|\bbye\b|\banything (else|i can help)\b(?!.*\bupdate\b)"),
    ("confirmation", r"\bright\s*\?$|\bdid you say\b|\blet me confirm\b|\bis that right\b"),
    ("slot_question", r"\?\s*$|^sorry would you like|\bany preference\b|\bwhich price range\b|\bhow many people\b"
                      r"|\bwhere should it be\b"),
    ("offer", r"\bis a (nice|great)\b|\bwhat do you think of this option\b"),
    ("attribute", r"\bserves .* food\b|\bprice range at\b|\bis in the .* (price range|part of town)\b"),
))
KINDS = (*(kind for kind, _ in KIND_PATTERNS), "other")


def answer_kind(answer: str) -> str:
    """The kind of a bot answer: one of :data:`KINDS`."""
    text = answer.strip().lower()
    return next((kind for kind, pattern in KIND_PATTERNS if pattern.search(text)), "other")


def accuracy_by_kind(examples: Sequence[TurnExample], predictions: Sequence[str]) -> dict[str, tuple[float, int]]:
    """Per-response accuracy (%) and number of turns of each kind present, in :data:`KINDS` order."""
    return _by_kind(examples, predictions, lambda gold, predicted: predicted == gold)


def decisions_by_kind(examples: Sequence[TurnExample], predictions: Sequence[str]) -> dict[str, tuple[float, int]]:
    """Per gold kind, the % of its turns answered with an answer of that kind (right or wrongly worded), and the
    number of turns: whether a model decides as the bot did (a no match where it said no match), apart from the
    wording it chose."""
    return _by_kind(examples, predictions, lambda gold, predicted: answer_kind(predicted) == answer_kind(gold))


def _by_kind(examples: Sequence[TurnExample], predictions: Sequence[str], right: Callable[[str, str], bool]
             ) -> dict[str, tuple[float, int]]:
    if len(examples) != len(predictions):
        raise ValueError(f"{len(examples)} examples but {len(predictions)} predictions")
    by: dict[str, list[bool]] = defaultdict(list)
    for example, predicted in zip(examples, predictions, strict=True):
        by[answer_kind(example.answer)].append(right(example.answer, predicted))
    return {kind: (round(percent(by[kind]), 2), len(by[kind])) for kind in KINDS if by[kind]}
