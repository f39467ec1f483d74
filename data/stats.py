"""Table 1 of Bordes et al. (2017) for any corpus directory in the dialog-bAbI layout.

Per dialog, averaged over all splits of a task: user utterances (``<SILENCE>`` and empty ones not counted), bot
utterances (every turn has one), API outputs (KB result lines) and their sum. Vocabulary: distinct
whitespace-separated tokens over a candidate set's dialog files and the candidates (line IDs excluded).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data import babi_format
from data.banking.labels import label_counts, read_labels
from data.corpus import Dialog, Turn, is_silence
from data.layout import BANKING_TASK, SPLITS, TaskFiles, discover, task_labels_name
from data.movie.reader import TASK_DIRECTORIES, MovieCorpus, discover_movie_corpus
from data.movie.reader import read_candidates as read_movie_candidates
from data.movie.reader import read_dialogs as read_movie_dialogs
from data.movie.reader import read_kb as read_movie_kb

# Table 1 of the paper; tasks 1-5 share one vocabulary and candidate set.
PAPER_TABLE1: dict[str, dict[str, Any]] = {
    "1": {"utterances": 12, "user_utterances": 5, "bot_utterances": 7, "api_outputs": 0},
    "2": {"utterances": 17, "user_utterances": 7, "bot_utterances": 10, "api_outputs": 0},
    "3": {"utterances": 43, "user_utterances": 7, "bot_utterances": 10, "api_outputs": 23},
    "4": {"utterances": 15, "user_utterances": 4, "bot_utterances": 4, "api_outputs": 7},
    "5": {"utterances": 55, "user_utterances": 13, "bot_utterances": 18, "api_outputs": 24},
    "6": {"utterances": 54, "user_utterances": 6, "bot_utterances": 8, "api_outputs": 40},
}
# The public release's own figures (dialogs counted over all its splits), given for calibration: the paper's
# Table 1 counts differ slightly from what its files hold.
RELEASE_TABLE1: dict[str, dict[str, float]] = {
    "1": {"user_utterances": 4.0, "bot_utterances": 6.0, "api_outputs": 0.0},
    "2": {"user_utterances": 6.5, "bot_utterances": 9.5, "api_outputs": 0.0},
    "3": {"user_utterances": 6.4, "bot_utterances": 9.9, "api_outputs": 24.0},
    "4": {"user_utterances": 3.5, "bot_utterances": 3.5, "api_outputs": 7.0},
    "5": {"user_utterances": 12.9, "bot_utterances": 18.4, "api_outputs": 23.7},
}
PAPER_VOCABULARY = {"1-5": 3747, "6": 1229}
PAPER_CANDIDATES = {"1-5": 4212, "6": 2406}
PAPER_DIALOGS = {"1-5": {"trn": 1000, "dev": 1000, "tst": 1000, "tst-OOV": 1000},
                 "6": {"trn": 1618, "dev": 500, "tst": 1117}}


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
    first candidate set found); ``candidate_sets`` lists every candidate set with its tasks.
    """
    tasks = discover(directory)
    if not tasks:
        try:
            return movie_stats(discover_movie_corpus(directory))
        except ValueError:
            raise ValueError(f"{directory}: no dialog-babi-task*-*.txt files, and no Movie Dialog task file") from None
    result: dict[str, Any] = {"tasks": {}, "candidate_sets": {}}
    groups: dict[str, dict[str, Any]] = {}
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
    labels = Path(directory) / task_labels_name(BANKING_TASK)
    if BANKING_TASK in tasks and labels.is_file():
        result["banking"] = label_counts(read_labels(labels))
    return result


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


def format_table(stats: dict[str, Any]) -> str:
    """Table 1 as text: our figure, and the paper's in parentheses where it has one."""
    if stats.get("layout") == "movie-dialog":
        return format_movie_table(stats)
    task_ids = list(stats["tasks"])
    header = ["", *(f"T{task}" for task in task_ids)]
    rows = [header]

    def paper_key(task: str) -> str:
        return "6" if task == "6" else "1-5"

    labels = (("utterances", "Number of utterances"), ("user_utterances", "- user utterances"),
              ("bot_utterances", "- bot utterances"), ("api_outputs", "- outputs from API calls"))
    for key, label in labels:
        row = [label]
        for task in task_ids:
            ours = stats["tasks"][task][key]
            paper = PAPER_TABLE1.get(task, {}).get(key)
            release = RELEASE_TABLE1.get(task, {}).get(key)
            reference = [str(paper)] if paper is not None else []
            reference += [f"{release:.1f}"] if release is not None else []
            row.append(f"{ours:.1f}" + (f" ({' / '.join(reference)})" if reference else ""))
        rows.append(row)
    for key, label, paper_values in (("vocabulary_size", "Vocabulary size", PAPER_VOCABULARY),
                                     ("candidates", "Candidate set size", PAPER_CANDIDATES)):
        row = [label]
        for task in task_ids:
            paper = paper_values.get(paper_key(task)) if task in PAPER_TABLE1 else None
            row.append(f"{stats['tasks'][task][key]:,}" + (f" ({paper:,})" if paper is not None else ""))
        rows.append(row)
    splits = sorted({split for task in task_ids for split in stats["tasks"][task]["dialogs"]}, key=SPLITS.index)
    for split in splits:
        row = [f"{split} dialogs"]
        for task in task_ids:
            ours = stats["tasks"][task]["dialogs"].get(split)
            paper = PAPER_DIALOGS.get(paper_key(task), {}).get(split) if task in PAPER_TABLE1 else None
            row.append(("-" if ours is None else f"{ours:,}") + (f" ({paper:,})" if paper is not None else ""))
        rows.append(row)
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines = ["Table 1: ours (paper / public release where known)", *lines]
    if "banking" in stats:
        lines += ["", "Banking dialogs per intent (trn, dev; tests as template split/challenge):"]
        for intent, counts in stats["banking"]["dialogs"].items():
            lines.append(f"  {intent}: " + ", ".join(f"{key} {n}" for key, n in counts.items()))
    return "\n".join(lines)
