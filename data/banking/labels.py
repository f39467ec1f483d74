"""The banking corpus's labels sidecar (``dialog-babi-task7-banking-labels.jsonl``): one JSON object per dialog.

Each line names the generator's ``seed``, the dialog (``split``, ``dialog`` index in its file), its ``intent``,
its template split (``templates``: trn, dev, IT, OOT), its out-of-pattern ``challenge`` (``none`` or a case),
whether the case occurs twice (``multiple``), and the bot turns that answer the phenomenon (``challenge_turns``).
The text layout stays the public one; readers of the labels (ExampleGen, stats, the Tables 8-9 scoring) import
this module, not the generator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from data.babi_format import FormatError

NONE = "none"
CHALLENGES = ("turn_compression", "new_api", "reordering", "another_slot", "audit_more")
MULTIPLE_CHALLENGES = ("turn_compression", "audit_more")
REQUIRED = ("split", "dialog", "intent", "templates", "challenge")

# The ``split`` feature of the banking test files: in-template and out-of-template tests.
SPLIT_FEATURE = {"tst": "IT", "tst-OOT": "OOT"}


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


def read_labels(path: str | Path, text: str | None = None) -> list[dict]:
    """The sidecar's labels (``text`` when already read, e.g. from remote storage); a malformed line is a
    :class:`FormatError` naming the file and line."""
    labels = []
    text = Path(path).read_text(encoding="utf-8") if text is None else text
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            label = json.loads(line)
        except json.JSONDecodeError as error:
            raise FormatError(path, number, f"not JSON: {error}") from None
        if not isinstance(label, dict):
            raise FormatError(path, number, "not a JSON object")
        missing = set(REQUIRED) - set(label)
        if missing:
            raise FormatError(path, number, f"missing {sorted(missing)}")
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
