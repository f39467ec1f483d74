"""What a corpus holds, counted: Table 1 of Bordes et al. (2017) for any directory in the dialog-bAbI layout (its
figures and format in ``data.babi.table1``), and the counts of a Movie Dialog corpus.

Per dialog, averaged over all splits of a task: user utterances (``<SILENCE>`` and empty ones not counted), bot
utterances (every turn has one), API outputs (KB result lines) and their sum. Vocabulary: distinct
whitespace-separated tokens over a candidate set's dialog files and the candidates (line IDs excluded).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data import babi_format
from data.banking.labels import label_counts
from data.corpus import Dialog, Turn, is_silence
from data.layout import BANKING_TASK, TaskFiles, discover
from data.movie.reader import TASK_DIRECTORIES, MovieCorpus, discover_movie_corpus
from data.movie.reader import read_candidates as read_movie_candidates
from data.movie.reader import read_dialogs as read_movie_dialogs
from data.movie.reader import read_kb as read_movie_kb
from data.progress import bar
from data.validate import banking_labels_path, check_banking_labels


@dataclass
class TaskCounts:
    dialogs: dict[str, int] = field(default_factory=dict)
    user: int = 0
    bot: int = 0
    api: int = 0

    def add(self, dialog: Dialog) -> None:
        turns = dialog.turns
        self.user += sum(not is_silence(turn.user) for turn in turns)
        self.bot += len(turns)
        self.api += len(dialog.kb_results)

    def as_json(self) -> dict[str, Any]:
        n = sum(self.dialogs.values()) or 1
        return {
            "utterances": round((self.user + self.bot + self.api) / n, 2),
            "user_utterances": round(self.user / n, 2),
            "bot_utterances": round(self.bot / n, 2),
            "api_outputs": round(self.api / n, 2),
            "dialogs": dict(self.dialogs),
        }


def dialog_tokens(dialog: Dialog) -> set[str]:
    tokens: set[str] = set()
    for line in dialog.lines:
        text = f"{line.user} {line.bot}" if isinstance(line, Turn) else line.text
        tokens.update(text.split())
    return tokens


def corpus_stats(directory: str | Path) -> dict[str, Any]:
    """Table 1 as a JSON-ready dict: per-task averages and dialog counts, vocabulary and candidate-set sizes.

    ``vocabulary_size`` and ``candidates`` describe the shared candidate set of tasks 1-5 when present (else the
    first candidate set found); ``candidate_sets`` lists every candidate set with its tasks. For a directory of
    dialog-bAbI files; a Movie Dialog corpus is :func:`movie_directory_stats`'s (the caller looks the paper up).
    """
    tasks = discover(directory)
    if not tasks:
        raise ValueError(f"{directory}: no dialog-babi-task*-*.txt files, and no Movie Dialog task file")
    result: dict[str, Any] = {"tasks": {}, "candidate_sets": {}}
    groups: dict[str, dict[str, Any]] = {}
    with bar(sum(len(files.splits) for files in tasks.values()), "counting", "file") as progress:
        for task, files in tasks.items():
            counts = TaskCounts()
            group_key = files.candidates.name if files.candidates else f"{files.label} (no candidates file)"
            group = groups.setdefault(group_key, {"tasks": [], "tokens": set(), "candidates": None, "files": files})
            group["tasks"].append(task)
            for split, path in files.splits.items():
                dialog_file = babi_format.read_dialogs(path)
                counts.dialogs[split] = len(dialog_file)
                for dialog in dialog_file:
                    counts.add(dialog)
                    group["tokens"].update(dialog_tokens(dialog))
                progress.update()
            result["tasks"][str(task)] = {"name": files.name, **counts.as_json()}
    for key, group in groups.items():
        files: TaskFiles = group["files"]
        candidates = babi_format.read_candidates(files.candidates).candidates if files.candidates else []
        for text in candidates:
            group["tokens"].update(text.split())
        entry = {"tasks": group["tasks"], "vocabulary_size": len(group["tokens"]), "candidates": len(candidates)}
        result["candidate_sets"][key] = entry
        for task in group["tasks"]:
            result["tasks"][str(task)].update(vocabulary_size=entry["vocabulary_size"], candidates=len(candidates))
    first = next(iter(result["candidate_sets"].values()))
    main = next((entry for entry in result["candidate_sets"].values() if 1 in entry["tasks"]), first)
    result["vocabulary_size"] = main["vocabulary_size"]
    result["candidates"] = main["candidates"]
    sidecar = banking_labels_path(tasks[BANKING_TASK]) if BANKING_TASK in tasks else None
    if sidecar is not None and os.path.lexists(sidecar):  # a FIFO or a device is named by the reader, not skipped
        # Checked as validate checks them: a label of the wrong type would be counted as an intent or a split.
        labels, problems = check_banking_labels(sidecar, result["tasks"][str(BANKING_TASK)]["dialogs"])
        if problems:
            first = problems[0]
            raise babi_format.FormatError(first.path, first.line, first.message)
        result["banking"] = label_counts(labels or [])
    return result


def movie_directory_stats(directory: str | Path) -> dict[str, Any]:
    """:func:`movie_stats` of a directory in the Movie Dialog layout; a malformed line is its own error, naming
    file and line."""
    return movie_stats(discover_movie_corpus(directory))


def movie_stats(corpus: MovieCorpus) -> dict[str, Any]:
    """A Movie Dialog corpus described: per task, dialogs and exchanges per split; entities, KB triples, task 4's
    candidate files."""
    entities = corpus.entity_list()
    tasks = {}
    for task, splits in corpus.tasks.items():
        dialogs = {split: read_movie_dialogs(path, entities) for split, path in splits.items()}
        tasks[str(task)] = {
            "name": TASK_DIRECTORIES[task], "dialogs": {split: len(found) for split, found in dialogs.items()},
            "exchanges": {split: sum(len(d.exchanges) for d in found) for split, found in dialogs.items()}}
    return {"layout": "movie-dialog", "tasks": tasks, "entities": len(entities),
            "kb_triples": len(read_movie_kb(corpus.kb, entities)) if corpus.kb else 0,
            "candidates": {split: len(read_movie_candidates(path)) for split, path in corpus.candidates.items()}}


def format_movie_table(stats: dict[str, Any]) -> str:
    lines = [f"Movie Dialog corpus: {stats['entities']:,} entities, {stats['kb_triples']:,} KB triples"
             + "".join(f", {n:,} {split} candidates (task 4)" for split, n in stats["candidates"].items())]
    for task, entry in stats["tasks"].items():
        counts = ", ".join(f"{split} {entry['dialogs'][split]:,} dialogs / {entry['exchanges'][split]:,} exchanges"
                           for split in entry["dialogs"])
        lines.append(f"  task {task} ({entry['name']}): {counts}")
    return "\n".join(lines)
