"""Movie Dialog examples (one per exchange, with the dialog so far), hits@k on them, and the corpus read once."""

from __future__ import annotations

from models.metrics import hits_at_k
from models.movie.examples import movie_examples, turn_examples


def test_examples_keep_the_dialog_history_and_every_answer(movies) -> None:
    corpus, entities, _ = movies
    examples = movie_examples(corpus, 3, "dev", entities)
    assert [e.exchange for e in examples[:3]] == [1, 2, 3]
    assert examples[2].history[:1] == (examples[0].query,) and len(examples[2].history) == 4
    ranked = [[e.answers[0]] for e in examples]
    assert hits_at_k(examples, ranked, 1) == 100.0 and hits_at_k(examples, [["nothing"]] * len(examples), 10) == 0.0


def test_turn_examples_read_the_history_as_alternating_memories(movies) -> None:
    corpus, entities, _ = movies
    example = movie_examples(corpus, 3, "dev", entities)[2]
    (turn,) = turn_examples([example])
    assert turn.memory == example.history and turn.query == example.query and turn.answer == example.answers[0]
    assert turn.memory_speaker[:2] == ("user", "bot") and turn.turn == example.exchange - 1


def test_movie_data_reads_each_file_once(data) -> None:
    assert data.examples(1, "train") is data.examples(1, "train")
    assert data.candidates("test") is data.candidates("test") and data.triples is data.triples
    assert data.entities and all(t.subject in data.entities for t in data.triples[:10])
