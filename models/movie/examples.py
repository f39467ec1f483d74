"""Movie Dialog examples (one per exchange) and the hits@k metric of Dodge et al.

An example holds the dialog so far (earlier texts and their answers, oldest first), the current text and the set
of correct answers; hits@k counts an example when any correct answer is among the first k ranked candidates (the
paper's k per task: ``models.movie.paper.PAPER_K``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from data.movie.reader import MovieCorpus, MovieDialog, Triple, read_candidates, read_dialogs, read_kb
from models.examples import BOT, USER, TurnExample


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
    return [example for index, dialog in enumerate(read_dialogs(corpus.tasks[task][split], entities))
            for example in dialog_examples(dialog, task, split, index)]


def dialog_examples(dialog: MovieDialog, task: int, split: str, index: int) -> list[MovieExample]:
    """One example per exchange of a dialog, each with the texts and answers before it."""
    examples = []
    history: list[str] = []
    for position, exchange in enumerate(dialog.exchanges, start=1):
        examples.append(MovieExample(task, split, index, position, tuple(history), exchange.text, exchange.answers))
        history += [exchange.text, ", ".join(exchange.answers)]
    return examples


class MovieData:
    """A Movie Dialog corpus read once: every method of Table 6 takes its examples, KB triples and candidate files
    from here, each file read the first time it is asked for."""

    def __init__(self, corpus: MovieCorpus) -> None:
        self.corpus = corpus
        self.entities = corpus.entity_list()
        self._examples: dict[tuple[int, str], list[MovieExample]] = {}
        self._candidates: dict[str, list[str]] = {}
        self._triples: list[Triple] | None = None

    def examples(self, task: int, split: str) -> list[MovieExample]:
        if (task, split) not in self._examples:
            self._examples[(task, split)] = movie_examples(self.corpus, task, split, self.entities)
        return self._examples[(task, split)]

    def candidates(self, split: str) -> list[str]:
        """Task 4's candidate file of a split."""
        if split not in self._candidates:
            self._candidates[split] = read_candidates(self.corpus.candidates[split])
        return self._candidates[split]

    @property
    def triples(self) -> list[Triple]:
        """The KB's triples (none without a KB file)."""
        if self._triples is None:
            self._triples = read_kb(self.corpus.kb, self.entities) if self.corpus.kb is not None else []
        return self._triples


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
