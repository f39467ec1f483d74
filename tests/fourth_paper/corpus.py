"""The echo corpus: ``say WORD`` answered by ``WORD``, twice a dialog, in the dialog-bAbI layout as task 9."""

from __future__ import annotations

import random
from pathlib import Path

TASK, NAME = 9, "echo"
WORDS = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel")
SPLITS = {"trn": 24, "dev": 8, "tst": 8}


def write_corpus(out: Path, seed: int = 0) -> Path:
    """Write the echo corpus into ``out``; returns it."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for split, dialogs in SPLITS.items():
        text = []
        for _ in range(dialogs):
            first, second = rng.choice(WORDS), rng.choice(WORDS)
            text.append(f"1 say {first}\t{first}\n2 now say {second}\t{second}\n")
        (out / f"dialog-babi-task{TASK}-{NAME}-{split}.txt").write_text("\n".join(text))
    (out / f"dialog-babi-task{TASK}-{NAME}-candidates.txt").write_text("".join(f"1 {w}\n" for w in WORDS))
    return out
