"""Table 1 of Bordes et al. (2017) as published, and as text beside the counts of any corpus in the dialog-bAbI
layout (``data.stats.corpus_stats``)."""

from __future__ import annotations

from typing import Any

from data.layout import SPLITS

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


def format_table(stats: dict[str, Any]) -> str:
    """Table 1 as text (``stats`` from ``data.stats.corpus_stats``): our figure, and the paper's in parentheses
    where it has one."""
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
