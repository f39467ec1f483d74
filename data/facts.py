"""The KB facts a corpus states: its KB file and the KB result lines of its dialogs, as (entity, attribute, value).

Featurisation (entity types for match type), the rule-based systems and the template ranker all read them the same
way, so they read them here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from data import babi_format
from data.corpus import Dialog
from data.layout import TaskFiles

Fact = tuple[str, str, str]


def kb_file_facts(path: str | Path, read_text: Callable[[str], str] = babi_format.read_text) -> list[Fact]:
    return [(f.entity, f.attribute, f.value) for f in babi_format.parse_kb(read_text(str(path)), path).facts]


def dialog_facts(dialogs: Iterable[Dialog]) -> list[Fact]:
    """The facts of the dialogs' KB result lines (``api_call no result`` states none)."""
    return [line.fact for dialog in dialogs for line in dialog.kb_results if line.fact is not None]


def corpus_facts(files: TaskFiles, splits: Sequence[str] = ("trn",),
                 read_text: Callable[[str], str] = babi_format.read_text) -> list[Fact]:
    """KB facts from the task's KB file and from the KB result lines of the given splits' dialogs.

    ``read_text`` reads a file's text (the TFX ExampleGen passes one that reads ``gs://`` paths too)."""
    facts = kb_file_facts(files.kb, read_text) if files.kb is not None else []
    for split in splits:
        if split in files.splits:
            facts += dialog_facts(babi_format.parse_dialogs(read_text(files.splits[split]), files.splits[split]))
    return facts
