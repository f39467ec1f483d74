"""Movie Dialog examples (one per exchange) and the hits@k metric of Dodge et al.

An example holds the dialog so far (earlier texts and their answers, oldest first), the current text and the set
of correct answers; hits@k counts an example when any correct answer is among the first k ranked candidates.
The paper's per-task choice: hits@1 for QA, hits@100 for recommendation, hits@10 for QA+recommendation and
discussion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from data.movie_dialog import MovieCorpus, read_dialogs

PAPER_K = {1: 1, 2: 100, 3: 10, 4: 10}


@dataclass(frozen=True)
class MovieExample:
    task: int
    split: str
    dialog: int
    exchange: int  # 1-based position in the dialog (task 3's breakdown by exchange)
    history: tuple[str, ...]
    query: str
    answers: tuple[str, ...]


def movie_examples(corpus: MovieCorpus, task: int, split: str, entities: Sequence[str] = ()) -> list[MovieExample]:
    """The examples of one task file (``entities``: to split comma-separated answers back into entities)."""
    examples = []
    for index, dialog in enumerate(read_dialogs(corpus.tasks[task][split], entities)):
        history: list[str] = []
        for position, exchange in enumerate(dialog.exchanges, start=1):
            examples.append(MovieExample(task, split, index, position, tuple(history), exchange.text,
                                         exchange.answers))
            history += [exchange.text, ", ".join(exchange.answers)]
    return examples


def hits_at_k(examples: Sequence[MovieExample], ranked: Sequence[Sequence[str]], k: int) -> float:
    """Percentage of examples with a correct answer among the first ``k`` ranked candidates."""
    if not examples:
        return 0.0
    hits = sum(bool(set(e.answers) & set(list(r)[:k])) for e, r in zip(examples, ranked, strict=True))
    return round(100.0 * hits / len(examples), 2)
