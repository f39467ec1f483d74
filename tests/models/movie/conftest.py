"""A tiny synthetic movie world shared by the Movie Dialog model tests (generated once per session)."""

from __future__ import annotations

import pytest

from data.movie.reader import discover_movie_corpus, read_kb
from data.movie.tasks import MoviePlan, generate
from models.movie.examples import MovieData


@pytest.fixture(scope="session")
def movies(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("movies")
    generate(MoviePlan(seed=3, scale="tiny"), out)
    corpus = discover_movie_corpus(out)
    entities = corpus.entity_list()
    return corpus, entities, read_kb(corpus.kb, entities)


@pytest.fixture(scope="session")
def data(movies) -> MovieData:
    """The same world read once, as the methods take it."""
    return MovieData(movies[0])
