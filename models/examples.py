"""One example per bot turn: what a response-ranking model sees and must answer, and a task's files read once.

Appendix A of Bordes et al. (2017): at bot turn t the memory holds every earlier utterance, user and bot, and the
KB results shown so far (stored as user utterances); the last user utterance is the query; the gold bot utterance
is the answer. No TensorFlow here: the baselines use examples as they are, the neural models featurise them.

Every method of the paper tables, learned or not, is fitted on a :class:`TaskData` (a task's files read once) and
ranks these examples (``models.methods``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from data import babi_format
from data.corpus import Dialog, KBResult
from data.facts import Fact, dialog_facts, kb_file_facts
from data.layout import DEVELOPMENT_SPLITS, TaskFiles

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

    @property
    def answers(self) -> tuple[str, ...]:
        """The correct answers (one here; a Movie Dialog example may have several), for hits@k."""
        return (self.answer,)


@dataclass(frozen=True, order=True)
class DialogId:
    """A dialog's id, ``{task}/{split}/{index}`` (``babi-5/tst/12``): unique across a corpus, and, ordered, the
    order of the corpus files. Built and read here only."""

    task: str
    split: str
    index: int

    def __str__(self) -> str:
        return f"{self.task}/{self.split}/{self.index}"

    @classmethod
    def parse(cls, text: str) -> DialogId:
        """The id of ``text``; a clear error for text that is not ``task/split/index`` with a whole index."""
        parts = text.rsplit("/", 2)
        if len(parts) != 3 or not parts[2].isdigit():
            raise ValueError(f"not a dialog id (task/split/index): {text!r}")
        return cls(parts[0], parts[1], int(parts[2]))


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
    """The ``task`` feature of the examples, as the task's paper names it (``models.papers``: babi-1 .. babi-5,
    dstc2 for task 6, banking for task 7)."""
    from models import papers

    return papers.turn_label(task)


def dialogs_examples(dialogs: Iterable[Dialog], task: int, split: str) -> list[TurnExample]:
    """Examples of a file's dialogs; dialog ids are ``{task}/{split}/{index}``, unique across a corpus."""
    label = task_label(task)
    examples: list[TurnExample] = []
    for index, dialog in enumerate(dialogs):
        examples.extend(dialog_examples(dialog, str(DialogId(label, split, index)), label, split))
    return examples


def file_examples(path: Path | str, task: int, split: str) -> list[TurnExample]:
    return dialogs_examples(babi_format.read_dialogs(path), task, split)


def _no_split(files: TaskFiles, split: str) -> FileNotFoundError:
    return FileNotFoundError(f"task {files.task} has no {split} file (looked for {files.label}-{split}.txt)")


def split_examples(files: TaskFiles, split: str) -> list[TurnExample]:
    if split not in files.splits:
        raise _no_split(files, split)
    return file_examples(files.splits[split], files.task, split)


@dataclass(frozen=True)
class TaskData:
    """A task's files read once: each split's dialogs and examples, the candidates, and the KB facts (the KB file
    and the training dialogs' KB results). The paper tables load a task once and hand it to every method."""

    files: TaskFiles | None  # None: examples that came without their files (the TFX Trainer's)
    dialogs: dict[str, list[Dialog]]
    examples: dict[str, list[TurnExample]]
    candidates: tuple[str, ...]
    facts: tuple[Fact, ...]

    @classmethod
    def load(cls, files: TaskFiles, splits: Sequence[str] | None = None) -> TaskData:
        """Read ``splits`` (default: every split present; ``trn`` always, for the facts)."""
        wanted = [s for s in files.splits if splits is None or s in splits or s == "trn"]
        dialogs = {split: list(babi_format.read_dialogs(files.splits[split])) for split in wanted}
        examples = {split: dialogs_examples(dialogs[split], files.task, split) for split in wanted}
        candidates = babi_format.read_candidates(files.candidates).candidates if files.candidates else []
        facts = (kb_file_facts(files.kb) if files.kb is not None else []) + dialog_facts(dialogs.get("trn", []))
        return cls(files, dialogs, examples, tuple(candidates), tuple(facts))

    @classmethod
    def of_examples(cls, trn: Sequence[TurnExample], dev: Sequence[TurnExample], candidates: Sequence[str],
                    facts: Sequence[Fact]) -> TaskData:
        """A task known by its examples alone (the TFX Trainer reads tf.Examples, not files): its sentences are
        those the training examples hold. ``dev`` is the TFX ``eval`` split: its examples of another development
        split (the banking ``dev-OOP``) go to a split of that name."""
        examples: dict[str, list[TurnExample]] = {"trn": list(trn), "dev": []}
        for example in dev:
            examples.setdefault(example.split if example.split in DEVELOPMENT_SPLITS else "dev", []).append(example)
        return cls(None, {}, examples, tuple(candidates), tuple(facts))

    def with_dialogs(self, dialogs: dict[str, list[Dialog]]) -> TaskData:
        """The same task with other splits (each split's dialogs; ``trn`` required), as if read from files: its
        examples, and as facts the KB file's and the new ``trn`` dialogs' KB results (k-fold selection trains on
        part of ``trn`` and must not see the held-out dialogs' results)."""
        if "trn" not in dialogs:
            raise ValueError(f"splits {sorted(dialogs)}: a trn split is needed")
        kb_facts = self.facts[:len(self.facts) - len(dialog_facts(self.dialogs.get("trn", [])))]
        examples = {split: dialogs_examples(part, self.task, split) for split, part in dialogs.items()}
        return TaskData(self.files, dict(dialogs), examples, self.candidates,
                        (*kb_facts, *dialog_facts(dialogs["trn"])))

    @property
    def task(self) -> int | None:
        return self.files.task if self.files is not None else None

    def where(self, split: str) -> str:
        """Where a split comes from, for messages: its file, or the split's name when there is no file."""
        return str(self.files.splits.get(split, split)) if self.files is not None else split

    def split(self, split: str) -> list[TurnExample]:
        if split not in self.examples:
            if self.files is None:
                raise FileNotFoundError(f"no {split} examples")
            raise _no_split(self.files, split)
        return self.examples[split]

    def sentences(self, split: str = "trn") -> list[str]:
        """Every utterance and KB result line of a split's dialogs (the vocabulary's source); without dialogs,
        every text of its examples (memories, queries, answers)."""
        if split not in self.dialogs:
            return [text for e in self.examples.get(split, []) for text in (*e.memory, e.query, e.answer)]
        return [text for dialog in self.dialogs[split] for text in dialog.texts]


def pad_batch(examples: Sequence[TurnExample]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Memory and speaker strings padded with "" to the longest memory of the batch; the queries."""
    width = max((len(e.memory) for e in examples), default=0)
    memory = np.array([list(e.memory) + [""] * (width - len(e.memory)) for e in examples], dtype=object)
    speaker = np.array([list(e.memory_speaker) + [""] * (width - len(e.memory)) for e in examples], dtype=object)
    return memory.reshape(len(examples), width), speaker.reshape(len(examples), width), np.array(
        [e.query for e in examples], dtype=object)


def batches_by_memory_length(examples: Sequence[TurnExample], size: int
                             ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The examples in batches of ``size`` of near equal memory length (sorted by it, stable), each as the indices
    of its examples and their :func:`pad_batch` arrays. A batch is padded to its longest memory: in a dialog's order
    a batch holds its first turns and its last, and the short ones paid for the padding of the long
    (docs/results.md measures it). A caller puts each row back at its index."""
    order = np.argsort([len(e.memory) for e in examples], kind="stable")
    for start in range(0, len(order), size):
        chosen = order[start:start + size]
        yield (chosen, *pad_batch([examples[i] for i in chosen]))


def batched_outputs(examples: Sequence[TurnExample], call: Callable[[np.ndarray, np.ndarray, np.ndarray], dict],
                    keys: Sequence[str], batch_size: int, done: Callable[[int], object] | None = None
                    ) -> dict[str, np.ndarray]:
    """``call(memory, speaker, query)``'s ``keys`` (arrays, one row per example) over every example, in the
    examples' order, called on :func:`batches_by_memory_length`. ``done(n)`` is told each batch's size as it
    ends."""
    indices: list[np.ndarray] = []
    parts: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    for chosen, memory, speaker, query in batches_by_memory_length(examples, batch_size):
        result = call(memory, speaker, query)
        for key in keys:
            parts[key].append(np.asarray(result[key]))
        indices.append(chosen)
        if done is not None:
            done(len(query))
    order = np.concatenate(indices)
    outputs = {}
    for key, value in parts.items():
        rows = np.concatenate(value)
        outputs[key] = np.empty_like(rows)
        outputs[key][order] = rows
    return outputs
