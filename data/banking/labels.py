"""The banking corpus's labels sidecar (``dialog-babi-task7-banking-labels.jsonl``): one JSON object per dialog.

Each line names the generator's ``seed``, the dialog (``split``, ``dialog`` index in its file), its ``intent``,
its template split (``templates``: trn, dev, IT, OOT), its out-of-pattern ``challenge`` (``none`` or a case),
whether the case occurs twice (``multiple``), the bot turns that answer the phenomenon (``challenge_turns``),
when the generator read an open detail of the paper otherwise than by default, its ``readings``, and
``swapped_thirds`` when training and development took each other's template third.
The text layout stays the public one; readers of the labels (ExampleGen, stats, the Tables 8-9 scoring) import
this module, not the generator.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from data.babi_format import FormatError, read_text
from data.banking.readings import readings_problem

NONE = "none"
CHALLENGES = ("turn_compression", "new_api", "reordering", "another_slot", "audit_more")
MULTIPLE_CHALLENGES = ("turn_compression", "audit_more")
REQUIRED = ("split", "dialog", "intent", "templates", "challenge")

# The ``split`` feature of the banking test files: in-template and out-of-template tests.
SPLIT_FEATURE = {"tst": "IT", "tst-OOT": "OOT"}
# The development challenge sets: every out-of-pattern case written with the development templates, so that a choice
# about out-of-pattern dialogs is made without a test file.
DEV_CHALLENGES = "dev-OOP"
SPLITS = ("trn", "dev", DEV_CHALLENGES, *SPLIT_FEATURE)  # a label's ``split``: the banking files
TEMPLATE_SPLITS = ("trn", "dev", *SPLIT_FEATURE.values())  # a label's ``templates``


def turn_challenge(label: dict, turn: int) -> str:
    """The ``challenge`` feature of a bot turn: ``none`` in non-OOP dialogs; the OOP case (``-multiple`` for the
    multiple sets) on the turns answering the phenomenon; that name with ``:context`` on the other turns."""
    if label["challenge"] == NONE:
        return NONE
    name = label["challenge"] + ("-multiple" if label.get("multiple") else "")
    return name if turn in label.get("challenge_turns", []) else f"{name}:context"


def challenge_values() -> list[str]:
    """Every value ``turn_challenge`` can give (the curated schema's domain)."""
    names = [*CHALLENGES, *(f"{c}-multiple" for c in MULTIPLE_CHALLENGES)]
    return [NONE, *(value for name in names for value in (name, f"{name}:context"))]


def render_labels(labels: Iterable[dict]) -> str:
    return "".join(json.dumps(label) + "\n" for label in labels)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0  # JSON's true is an int in Python


def _one_of(values: tuple[str, ...]) -> tuple[Callable[[Any], bool], str]:
    return (lambda value: isinstance(value, str) and value in values), "one of " + ", ".join(values)


# Each field a label line may have: whether a value is valid, and what is expected, in words.
FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "split": _one_of(SPLITS),
    "dialog": (_whole, "a whole number from 0"),
    "intent": (lambda value: isinstance(value, str) and bool(value), "a non-empty string"),
    "templates": _one_of(TEMPLATE_SPLITS),
    "challenge": _one_of((NONE, *CHALLENGES)),
    "multiple": (lambda value: isinstance(value, bool), "true or false"),
    "challenge_turns": (lambda value: isinstance(value, list) and all(map(_whole, value)),
                        "a list of whole numbers from 0"),
    "seed": (lambda value: isinstance(value, int) and not isinstance(value, bool), "a whole number"),
    "readings": (lambda value: readings_problem(value) is None, "an object of the generator's readings "
                                                               "(data/banking/readings.py)"),
    "swapped_thirds": (lambda value: isinstance(value, bool), "true or false"),
}


def label_problem(label: dict[str, Any]) -> str | None:
    """What is wrong with one label line, or None: a missing field, or a field of the wrong type or outside its
    values. Every reader (validate, stats, the ExampleGen, the Tables 8-9 scoring) reads through this, so a label
    such as ``"intent": 5`` is refused by all of them alike, not counted as an intent by some."""
    missing = set(REQUIRED) - set(label)
    if missing:
        return f"missing {sorted(missing)}"
    for key, (valid, expected) in FIELDS.items():
        if key in label and not valid(label[key]):
            return f"{json.dumps(key)} is {json.dumps(label[key])[:60]}: expected {expected}"
    return None


def read_labels(path: str | Path, text: str | None = None) -> list[dict]:
    """The sidecar's labels (``text`` when already read, e.g. from remote storage); a malformed line is a
    :class:`FormatError` naming the file and line."""
    labels = []
    text = read_text(path) if text is None else text
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            label = json.loads(line)
        except json.JSONDecodeError as error:
            raise FormatError(path, number, f"not JSON: {error}") from None
        if not isinstance(label, dict):
            raise FormatError(path, number, "not a JSON object")
        problem = label_problem(label)
        if problem is not None:
            raise FormatError(path, number, problem)
        labels.append(label)
    return labels


def label_counts(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"dialogs": {intent: {split_or_challenge: n}}}``: ``trn``, ``dev``, and ``IT/<challenge>``,
    ``OOT/<challenge>`` for the tests (``-multiple`` for the multiple-OOP sets)."""
    dialogs: dict[str, dict[str, int]] = {}
    for label in labels:
        key = label["split"] if label["split"] in ("trn", "dev") else (
            f"{label['templates']}/{label['challenge']}" + ("-multiple" if label.get("multiple") else ""))
        counts = dialogs.setdefault(label["intent"], {})
        counts[key] = counts.get(key, 0) + 1
    return {"dialogs": dialogs}
