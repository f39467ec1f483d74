"""Check a corpus directory in the dialog-bAbI layout, file by file and across files.

Checks: every task has its splits; every file can be read, is well formed and round-trips byte for byte; every
gold bot utterance is in the task's candidate set; every KB result line is a fact of the KB (when the corpus has a
KB file; corpora without one, such as task 6, are valid).

Findings are errors (a file that cannot be read or used: unreadable, malformed, a missing split, a gold answer
outside the candidates) or warnings (the corpus is usable but disagrees with itself: a KB result that the KB file
states otherwise, a duplicate candidate). The public dialog-bAbI release has such warnings (its ``tst-OOV`` files
give some restaurants other attributes than its KB file), so warnings leave a corpus valid unless ``strict``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data import babi_format
from data.babi_format import FormatError
from data.banking.labels import read_labels
from data.corpus import DialogFile, KBResult, Line, Turn
from data.layout import (
    BANKING_TASK,
    SHARED_CANDIDATES,
    TaskFiles,
    discover,
    expected_splits,
    task_candidates_name,
    task_labels_name,
)
from data.movie.reader import SPLITS as MOVIE_SPLITS
from data.movie.reader import MovieCorpus, discover_movie_corpus, read_entities
from data.movie.reader import read_candidates as read_movie_candidates
from data.movie.reader import read_dialogs as read_movie_dialogs
from data.movie.reader import read_kb as read_movie_kb
from data.progress import bar


@dataclass(frozen=True)
class Problem:
    path: str
    line: int | None
    message: str
    kind: str | None = None  # a warning's kind (what it is counted under); None for an error

    @property
    def is_warning(self) -> bool:
        return self.kind is not None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass
class ValidationReport:
    directory: str
    problems: list[Problem] = field(default_factory=list)
    files_checked: int = 0
    dialogs: int = 0
    turns: int = 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if not p.is_warning]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.is_warning]

    @property
    def ok(self) -> bool:
        """No error (warnings allowed)."""
        return not self.errors

    def passes(self, strict: bool = False) -> bool:
        return self.ok and not (strict and self.warnings)

    def add(self, path: Path | str, line: int | None, message: str) -> None:
        self.problems.append(Problem(str(path), line, message))

    def warn(self, path: Path | str, line: int | None, kind: str, detail: str) -> None:
        self.problems.append(Problem(str(path), line, f"{kind}: {detail}", kind))

    def format(self, max_per_file: int = 10, strict: bool = False) -> str:
        verdict = "OK" if self.passes(strict) else "INVALID"
        lines = [f"{verdict}: {self.directory}: {self.files_checked} files, {self.dialogs} dialogs, {self.turns} bot "
                 f"turns, {len(self.errors)} errors, {len(self.warnings)} warnings"
                 + (" (--strict: warnings fail)" if strict and self.warnings else "")]
        by_file: dict[str, list[Problem]] = {}
        for problem in self.errors:
            by_file.setdefault(problem.path, []).append(problem)
        for path, problems in by_file.items():
            lines.append(f"  {path}: {len(problems)} error(s)")
            lines.extend(f"    {problem}" for problem in problems[:max_per_file])
            if len(problems) > max_per_file:
                lines.append(f"    ... and {len(problems) - max_per_file} more")
        kinds: dict[tuple[str, str], list[Problem]] = {}
        for problem in self.warnings:
            kinds.setdefault((problem.path, problem.kind or ""), []).append(problem)
        if kinds:
            lines.append("  warnings, by file and kind:")
        for (path, kind), problems in kinds.items():
            lines.append(f"    {path}: {kind}: {len(problems)} (first: {problems[0]})")
        return "\n".join(lines)


def numbered_lines(dialog_file: DialogFile) -> Iterator[tuple[int, Line]]:
    """Each dialog line with its 1-based line number in the file."""
    number = 0
    for dialog in dialog_file:
        for line in dialog.lines:
            number += 1
            yield number, line
        number += dialog.blank_lines_after


def _read_checked(path: Path, parse: Callable[[str, Path], Any], render: Callable[[Any], str],
                  report: ValidationReport) -> Any | None:
    """Parse a file and check that it round-trips; None (and a problem) when it cannot be read."""
    report.files_checked += 1
    try:
        text = babi_format.read_text(path)  # an unreadable path (a directory, a broken link) is a FormatError too
        parsed = parse(text, path)
    except FormatError as error:
        report.add(error.path, error.line, error.message)
        return None
    rendered = render(parsed)
    if rendered != text:
        pairs = enumerate(zip(rendered, text, strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(rendered), len(text)))
        report.add(path, text.count("\n", 0, at) + 1, "does not round-trip byte for byte (first difference here)")
    return parsed


def validate_corpus(directory: str | Path, partial: bool = False) -> ValidationReport:
    """Validate a corpus directory of dialog-bAbI files (which paper's it is, and so its layout, the caller has
    looked up: ``models.papers``). With ``partial``, a missing split is not a problem."""
    directory = Path(directory)
    report = ValidationReport(str(directory))
    if not directory.is_dir():
        report.add(directory, None, "not a directory")
        return report
    try:
        tasks = discover(directory)
    except ValueError as error:
        report.add(directory, None, str(error))
        return report
    if not tasks:
        report.add(directory, None, "no dialog files named dialog-babi-task{N}-{name}-{split}.txt, and no Movie "
                                    "Dialog task file (e.g. task1_qa/task1_qa_train.txt)")
        return report

    candidate_sets: dict[Path, set[str] | None] = {}
    kbs: dict[Path, tuple[set[str], set[tuple[str, str, str]]] | None] = {}
    with bar(sum(len(files.splits) for files in tasks.values()), "validating", "file") as progress:
        for task, files in tasks.items():
            if not partial:
                for split in expected_splits(task):
                    if split not in files.splits:
                        report.add(directory, None, f"task {task}: missing split {split} "
                                   f"(dialog-babi-task{task}-{files.name}-{split}.txt)")
            if files.candidates is None:
                report.add(directory, None, f"task {task}: no candidates file "
                           f"({task_candidates_name(task, files.name)} or {SHARED_CANDIDATES})")
            elif files.candidates not in candidate_sets:
                candidate_sets[files.candidates] = _check_candidates(files.candidates, report)
            if files.kb is not None and files.kb not in kbs:
                kb_file = _read_checked(files.kb, babi_format.parse_kb, babi_format.render_kb, report)
                kbs[files.kb] = None if kb_file is None else (
                    {fact.entity for fact in kb_file.facts},
                    {(fact.entity, fact.attribute, fact.value) for fact in kb_file.facts})
            candidates = candidate_sets.get(files.candidates) if files.candidates else None
            kb = kbs.get(files.kb) if files.kb else None
            dialog_counts: dict[str, int] = {}
            for split, path in files.splits.items():
                dialog_file = _read_checked(path, babi_format.parse_dialogs, babi_format.render_dialogs, report)
                if dialog_file is not None:
                    _check_dialogs(path, dialog_file, candidates, kb, report)
                    dialog_counts[split] = len(dialog_file)
                progress.update()
            if task == BANKING_TASK:
                _banking_labels(files, dialog_counts, report)
    return report


def _banking_labels(files: TaskFiles, dialog_counts: dict[str, int], report: ValidationReport) -> None:
    """The banking task's labels sidecar: present, and as :func:`check_banking_labels` wants it."""
    path = banking_labels_path(files)
    if not os.path.lexists(path):  # a FIFO, a device or a dangling link is named by the reader, not called missing
        report.add(path, None, "missing: the banking task's labels sidecar (one JSON line per dialog)")
        return
    report.files_checked += 1
    report.problems += check_banking_labels(path, dialog_counts)[1]


def banking_labels_path(files: TaskFiles) -> Path:
    """The banking task's labels sidecar, beside its dialog files."""
    return Path(next(iter(files.splits.values()))).parent / task_labels_name(BANKING_TASK, files.name)


def check_banking_labels(path: Path, dialog_counts: dict[str, int]) -> tuple[list[dict] | None, list[Problem]]:
    """The sidecar's labels (None when a line cannot be read) and what is wrong with them: a malformed line or a
    field of the wrong type (``data.banking.labels``), a dialog of a file that could be read (``dialog_counts``:
    split -> dialogs) without its line, a line for a dialog that is not there. ``dialog validate`` lists every
    problem and ``dialog stats`` stops at the first: one check, so the two never disagree about a sidecar."""
    try:
        labels = read_labels(path, babi_format.read_text(path))
    except FormatError as error:
        return None, [Problem(error.path, error.line, error.message)]
    problems = []
    labelled = {(label["split"], label["dialog"]) for label in labels}
    for split, count in dialog_counts.items():
        dialogs = {(split, index) for index in range(count)}
        if dialogs - labelled:
            problems.append(Problem(str(path), None, f"no label line for {len(dialogs - labelled)} dialog(s) of "
                                                     f"{split}, e.g. dialog {min(dialogs - labelled)[1]}"))
        extra = {key for key in labelled if key[0] == split} - dialogs
        if extra:
            problems.append(Problem(str(path), None, f"{len(extra)} label line(s) for dialogs {split} does not "
                                                     f"have, e.g. dialog {min(extra)[1]}"))
    return labels, problems


def validate_movie_directory(directory: str | Path, partial: bool = False) -> ValidationReport:
    """Validate a corpus directory in the Movie Dialog layout (:func:`validate_movie_corpus`)."""
    report = ValidationReport(str(directory))
    try:
        corpus = discover_movie_corpus(directory)
    except ValueError as error:
        report.add(Path(directory), None, str(error))
        return report
    return validate_movie_corpus(corpus, report, partial)


def validate_movie_corpus(corpus: MovieCorpus, report: ValidationReport, partial: bool = False) -> ValidationReport:
    """A corpus in the Movie Dialog layout: every file readable with its lines well formed (file and line named),
    every task with its splits, the answers of tasks 1-3 entities of ``entities.txt`` and task 4's dev and test
    replies in their split's candidate file (warnings: the corpus is still usable)."""
    def read(reader: Callable[..., Any], path: Path | None, *args: Any) -> Any | None:
        if path is None:
            return None
        report.files_checked += 1
        try:
            return reader(path, *args)
        except FormatError as error:
            report.add(error.path, error.line, error.message)
            return None

    entities = read(read_entities, corpus.entities) or []
    if corpus.entities is None:
        report.add(corpus.root, None, "no entities.txt (the candidates of tasks 1-3)")
    read(read_movie_kb, corpus.kb, entities)
    replies = {split: set(found) for split, path in corpus.candidates.items()
               if (found := read(read_movie_candidates, path)) is not None}  # task 4's, per split
    known = set(entities)
    for task, splits in corpus.tasks.items():
        if not partial:
            for split in MOVIE_SPLITS:
                if split not in splits:
                    report.add(corpus.root, None, f"task {task}: missing split {split}")
        for split, path in splits.items():
            dialogs = read(read_movie_dialogs, path, entities)
            if dialogs is None:
                continue
            report.dialogs += len(dialogs)
            for dialog in dialogs:
                for exchange in dialog.exchanges:
                    report.turns += 1
                    if task != 4 and known and not set(exchange.answers) <= known:
                        report.warn(path, None, "answer not an entity of entities.txt",
                                    repr(sorted(set(exchange.answers) - known)[0]))
                    elif task == 4 and split in replies and not set(exchange.answers) & replies[split]:
                        report.warn(path, None, "reply not in the split's candidate file", repr(exchange.answers[0]))
    return report


def _check_candidates(path: Path, report: ValidationReport) -> set[str] | None:
    candidate_file = _read_checked(path, babi_format.parse_candidates, babi_format.render_candidates, report)
    if candidate_file is None:
        return None
    seen: Counter[str] = Counter()
    for number, text in enumerate(candidate_file.candidates, start=1):
        seen[text] += 1
        if seen[text] == 2:
            report.warn(path, number, "duplicate candidate", repr(text))
        if text != text.strip():
            report.warn(path, number, "candidate with leading or trailing spaces", repr(text))
    return set(seen)


def _check_dialogs(path: Path, dialog_file: DialogFile, candidates: set[str] | None,
                   kb: tuple[set[str], set[tuple[str, str, str]]] | None, report: ValidationReport) -> None:
    if not len(dialog_file):
        report.add(path, None, "no dialogs")
    report.dialogs += len(dialog_file)
    stripped = {c.strip(): c for c in candidates} if candidates is not None else {}  # to name a spaces-only miss
    for number, line in numbered_lines(dialog_file):
        if isinstance(line, Turn):
            report.turns += 1
            if candidates is not None and line.bot not in candidates:
                near = stripped.get(line.bot.strip()) if line.bot.strip() else None
                report.add(path, number, f"gold bot utterance not in the candidate set: {line.bot!r}"
                           + (f" (the candidate {near!r} differs in spaces only)" if near is not None else ""))
        elif isinstance(line, KBResult) and kb is not None and line.fact is not None:
            entities, facts = kb
            if line.fact[0] not in entities:
                report.warn(path, number, "KB result names an entity the KB does not have", repr(line.fact[0]))
            elif line.fact not in facts:
                report.warn(path, number, "KB result is not a fact of the KB", repr(line.text))
