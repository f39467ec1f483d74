"""One example per bot turn: what a response-ranking model sees and must answer (DESIGN.md, example schema).

Appendix A of Bordes et al. (2017): at bot turn t the memory holds every earlier utterance, user and bot, and the
KB results shown so far (stored as user utterances); the last user utterance is the query; the gold bot utterance
is the answer. No TensorFlow here: the baselines use examples as they are, the neural models featurise them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from data import babi_format
from data.corpus import Dialog, KBResult
from data.layout import TaskFiles

USER = "user"
BOT = "bot"


@dataclass(frozen=True)
class TurnExample:
    dialog_id: str
    task: str
    split: str
    turn: int  # position of this bot turn in its dialog, from 0
    memory: tuple[str, ...]
    memory_speaker: tuple[str, ...]
    query: str
    answer: str


def dialog_examples(dialog: Dialog, dialog_id: str, task: str, split: str) -> Iterator[TurnExample]:
    memory: list[str] = []
    speakers: list[str] = []
    turn = 0
    for line in dialog.lines:
        if isinstance(line, KBResult):
            memory.append(line.text)
            speakers.append(USER)
            continue
        yield TurnExample(dialog_id, task, split, turn, tuple(memory), tuple(speakers), line.user, line.bot)
        memory += [line.user, line.bot]
        speakers += [USER, BOT]
        turn += 1


def task_label(task: int) -> str:
    """The `task` feature of DESIGN.md: babi-1 .. babi-5, dstc2 for task 6, banking for task 7."""
    return {6: "dstc2", 7: "banking"}.get(task, f"babi-{task}")


def file_examples(path: Path | str, task: int, split: str) -> list[TurnExample]:
    """Examples of one dialog file; dialog ids are ``{task}/{split}/{index}``, unique across a corpus."""
    label = task_label(task)
    examples: list[TurnExample] = []
    for index, dialog in enumerate(babi_format.read_dialogs(path)):
        examples.extend(dialog_examples(dialog, f"{label}/{split}/{index}", label, split))
    return examples


def split_examples(files: TaskFiles, split: str) -> list[TurnExample]:
    if split not in files.splits:
        raise FileNotFoundError(f"task {files.task} has no {split} file (looked for {files.label}-{split}.txt)")
    return file_examples(files.splits[split], files.task, split)
