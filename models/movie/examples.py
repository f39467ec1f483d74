"""Movie Dialog examples (one per exchange) and the hits@k metric of Dodge et al.

An example holds the dialog so far (earlier texts and their answers, oldest first), the current text and the set
of correct answers; hits@k counts an example when any correct answer is among the first k ranked candidates.
The paper's per-task choice: hits@1 for QA, hits@100 for recommendation, hits@10 for QA+recommendation and
discussion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from data.movie.reader import MovieCorpus, read_dialogs
from models.examples import BOT, USER, TurnExample

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


def turn_examples(examples: Sequence[MovieExample], text: Callable[[str], str] = str,
                  answer_text: Callable[[str], str] = str, long_term: Callable[[str], list[str]] | None = None,
                  answers: int = 1) -> list[TurnExample]:
    """The examples as the dialog-bAbI side's :class:`TurnExample`s, so its models and baselines serve unchanged.

    ``text`` rewrites the history and query (e.g. into the dictionary's tokens) and ``answer_text`` each answer;
    ``long_term`` finds KB sentences for the last messages, put before the history as user-side memories (as
    bAbI's KB results); each example yields one per answer, up to ``answers``."""
    turns = []
    for e in examples:
        history = [text(h) for h in e.history]
        query = text(e.query)
        kb = long_term(" ".join([*history[-2:], query])) if long_term is not None else []
        memory = (*kb, *history)
        speakers = (*([USER] * len(kb)), *(USER if i % 2 == 0 else BOT for i in range(len(history))))
        for answer in e.answers[:answers]:
            turns.append(TurnExample(f"movie-{e.task}/{e.split}/{e.dialog}", f"movie-{e.task}", e.split,
                                     e.exchange - 1, memory, speakers, query, answer_text(answer)))
    return turns
