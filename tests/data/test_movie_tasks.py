"""The synthetic movie world and its tasks, read back through the public-layout reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.movie_dialog import discover_movie_corpus, read_candidates, read_dialogs, read_kb
from data.movie_tasks import MoviePlan, generate
from data.movie_world import build_world

PLAN = MoviePlan(seed=2, scale="tiny")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("movies")
    generate(PLAN, out)
    return out


def test_written_in_the_public_layout_and_read_back(corpus: Path) -> None:
    movies = discover_movie_corpus(corpus)
    assert sorted(movies.tasks) == [1, 2, 3, 4] and sorted(movies.candidates) == ["dev", "test"]
    entities = movies.entity_list()
    qa = read_dialogs(movies.tasks[1]["train"], entities)
    assert len(qa) == 300 and all(len(d.exchanges) == 1 for d in qa)
    assert all(len(d.exchanges) == 3 for d in read_dialogs(movies.tasks[3]["dev"], entities))


def test_qa_answers_are_exactly_the_kb_values(corpus: Path) -> None:
    movies = discover_movie_corpus(corpus)
    entities = movies.entity_list()
    triples = read_kb(movies.kb, entities)
    directors: dict[str, set[str]] = {}
    for t in triples:
        if t.relation == "directed_by":
            directors.setdefault(t.subject, set()).add(t.value)
    checked = 0
    for dialog in read_dialogs(movies.tasks[1]["train"], entities):
        exchange = dialog.exchanges[0]
        if exchange.text.startswith("who directed "):
            title = exchange.text.removeprefix("who directed ").removesuffix("?")
            assert set(exchange.answers) == directors[title]
            checked += 1
    assert checked > 0


def test_recommendations_come_from_the_latent_factor_tastes(corpus: Path) -> None:
    world = build_world(PLAN.seed, PLAN.scale)
    liked_sets = [set(world.liked(u)) for u in range(len(world.users))]
    titles = {m.title: i for i, m in enumerate(world.movies)}
    movies = discover_movie_corpus(corpus)
    for dialog in read_dialogs(movies.tasks[2]["test"], movies.entity_list()):
        exchange = dialog.exchanges[0]
        answer = titles[exchange.answers[0]]
        mentioned = {i for t, i in titles.items() if t in exchange.text}
        assert answer not in mentioned
        assert any(answer in liked and mentioned <= liked for liked in liked_sets)  # one user likes them all


def test_reddit_candidates_hold_every_true_reply(corpus: Path) -> None:
    movies = discover_movie_corpus(corpus)
    candidates = set(read_candidates(movies.candidates["test"]))
    replies = {a for d in read_dialogs(movies.tasks[4]["test"]) for e in d.exchanges for a in e.answers}
    assert replies <= candidates and len(candidates) > len(replies)


def test_same_seed_same_bytes(corpus: Path, tmp_path: Path) -> None:
    generate(PLAN, tmp_path)
    for path in corpus.rglob("*.txt"):
        assert path.read_bytes() == (tmp_path / path.relative_to(corpus)).read_bytes(), path
