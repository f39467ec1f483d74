"""The LSTM baseline: padding-free mean of hidden states, the input sequence, an order over every candidate that
``Among`` restricts to a split's own."""

from __future__ import annotations

import numpy as np
import pytest

from data.movie.reader import discover_movie_corpus
from data.movie.tasks import MoviePlan, generate
from models.examples import TurnExample
from models.methods import Among, first_k
from models.metrics import hits_at_k
from models.movie.examples import movie_examples
from models.movie.lstm import LstmConfig, LstmNetwork, MovieLstm


def test_the_message_is_the_mean_of_hidden_states_over_words_only() -> None:
    model = LstmNetwork(10, np.array([[1, 2], [3, 0]]), embedding_dim=4, seed=1)
    padded = model.encode(np.array([[0, 0, 0, 5, 6, 7]])).numpy()
    bare = model.encode(np.array([[5, 6, 7]])).numpy()
    assert np.allclose(padded, bare, atol=1e-6)
    hidden = model.lstm(model.E(np.array([[5, 6, 7]]))).numpy()
    assert np.allclose(bare, hidden.mean(axis=1), atol=1e-6)
    assert model({"tokens": np.array([[5, 6, 7]])}).shape == (1, 2)


def test_first_k_keeps_the_order_and_only_the_allowed() -> None:
    candidates = ["a", "b", "c", "d"]
    assert first_k(candidates, [[3, 1, 0, 2]], 2) == [["d", "b"]]
    assert first_k(candidates, [[3, 1, 0, 2]], 2, among={"a", "c"}) == [["a", "c"]]


@pytest.fixture(scope="module")
def task2(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("movies")
    generate(MoviePlan(seed=5, scale="tiny"), out)
    corpus = discover_movie_corpus(out)
    entities = corpus.entity_list()
    return entities, *(movie_examples(corpus, 2, split, entities) for split in ("train", "dev", "test"))


@pytest.fixture(scope="module")
def trained(task2) -> MovieLstm:
    entities, trn, dev, _ = task2
    return MovieLstm.fit(entities, trn, dev, LstmConfig(epochs=3, learning_rate=0.01))


def test_the_input_is_the_last_messages_and_the_query_left_padded(task2) -> None:
    entities, trn, dev, _ = task2
    model = MovieLstm.fit(entities, trn[:20], dev[:5], LstmConfig(epochs=1, context=1, max_tokens=6))
    turn = TurnExample("d", "movie-3", "train", 1, ("first message", "the answer"), ("user", "bot"), "a question", "x")
    row = model.sequences([turn])[0]
    words = ["the", "answer", "a", "question"]
    assert row.tolist() == [0, 0, *(model.spec.word_id(w) for w in words)]
    long = TurnExample("d", "movie-3", "train", 0, (), ("user",), "one two three four five six seven eight", "x")
    assert len(model.sequences([long])[0]) == 6  # the last max_tokens words


def test_lstm_learns_recommendations_far_above_chance(task2, trained) -> None:
    entities, trn, dev, test = task2
    movies = {a for e in trn + dev + test for a in e.answers}
    hits = hits_at_k(test, Among(trained, among=entities).rank(test, 100), 100)
    assert hits > 2 * 100 * 100 / len(entities) and hits >= 85.0, (hits, len(movies))  # random: 100 / candidates


def test_among_keeps_only_the_allowed_answers_in_the_lstms_order(task2, trained) -> None:
    _, _, _, test = task2
    examples = test[:8]
    order = [list(row) for row in trained.order(examples)]
    assert all(sorted(row) == list(range(len(trained.candidates))) for row in order)  # every candidate, once
    allowed = set(trained.candidates[::3])
    ranked = Among(trained, among=allowed).rank(examples, 5)
    assert all(len(row) == 5 and set(row) <= allowed for row in ranked)
    assert ranked == [[trained.candidates[i] for i in row if trained.candidates[i] in allowed][:5] for row in order]
    assert trained.rank(examples, 5) == [[trained.candidates[i] for i in row[:5]] for row in order]
