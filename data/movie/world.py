"""A synthetic movie world of the shape of Dodge et al.'s (OMDb + MovieLens): movies with directors, writers,
actors, years, genres, tags, languages, IMDb ratings and votes, and users whose ratings come from a latent-factor
model, so that recommendations are learnable from other users' tastes.

Names are made of syllables, so entities are unique and carry no real-world knowledge. Everything depends on the
seed and the scale only.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

GENRES = ("Drama", "Comedy", "Thriller", "Horror", "Romance", "Action", "Documentary", "Animation", "Crime",
          "Western", "Musical", "Mystery", "Adventure", "Fantasy", "War")
TAGS = ("time travel", "heist", "based on a book", "dystopia", "coming of age", "road trip", "revenge", "space",
        "small town", "courtroom", "cult film", "friendship", "survival", "music", "politics", "family",
        "sports", "artificial intelligence", "world war", "martial arts", "zombies", "vampires", "romantic",
        "twist ending", "true story", "satire", "noir", "remake", "sequel", "black and white")
LANGUAGES = ("English", "French", "Spanish", "German", "Italian", "Japanese", "Korean", "Hindi", "Swedish",
             "Russian", "Portuguese", "Mandarin")
_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "ch", "dr",
           "gr", "kl", "pr", "sh", "st", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
_CODAS = ("", "", "n", "r", "s", "l", "m", "th", "x", "nd")
_TITLE_WORDS = ("River", "Night", "Garden", "Stranger", "Shadow", "Summer", "Winter", "Harbor", "Crown", "Letter",
                "Mirror", "Storm", "Island", "Promise", "Silence", "Machine", "Voyage", "Dream", "Empire", "Echo",
                "Lantern", "Orchard", "Signal", "Frontier", "Whisper", "Canyon", "Carnival", "Forest", "Station",
                "Bridge")
_TITLE_ADJECTIVES = ("Silent", "Last", "Golden", "Broken", "Hidden", "Burning", "Lonely", "Midnight", "Secret",
                     "Wild", "Distant", "Crimson", "Frozen", "Electric", "Gentle", "Savage")
# "paper": about the paper's 75k KB entities and its ~110k training users (plus 1% each for dev and test).
SCALES = {"tiny": {"movies": 80, "people": 120, "users": 200},
          "small": {"movies": 600, "people": 900, "users": 1500},
          "paper": {"movies": 19_000, "people": 90_000, "users": 112_000}}
FACTORS = 8


def _syllable_name(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))


@dataclass
class Movie:
    title: str
    directors: list[str]
    writers: list[str]
    actors: list[str]
    year: str
    genres: list[str]
    tags: list[str]
    language: str
    imdb_rating: str
    imdb_votes: str
    factors: list[float] = field(repr=False, default_factory=list)


@dataclass
class World:
    movies: list[Movie]
    users: list[list[float]]  # each user's latent tastes
    seed: int

    def triples(self) -> list[tuple[str, str, list[str]]]:
        """(movie, relation, values) in the public KB's relations."""
        rows = []
        for m in self.movies:
            rows += [(m.title, "directed_by", m.directors), (m.title, "written_by", m.writers),
                     (m.title, "starred_actors", m.actors), (m.title, "release_year", [m.year]),
                     (m.title, "has_genre", m.genres), (m.title, "has_tags", m.tags),
                     (m.title, "in_language", [m.language]), (m.title, "has_imdb_rating", [m.imdb_rating]),
                     (m.title, "has_imdb_votes", [m.imdb_votes])]
        return [row for row in rows if row[2]]

    def entities(self) -> list[str]:
        seen: dict[str, None] = {}
        for title, _, values in self.triples():
            seen[title] = None
            seen.update((v, None) for v in values)
        return list(seen)

    @cached_property
    def _movie_factors(self) -> np.ndarray:
        return np.array([m.factors for m in self.movies], dtype=np.float64)

    def _scaled_scores(self, user: int) -> np.ndarray:
        return 1.5 * (self._movie_factors @ np.asarray(self.users[user], dtype=np.float64))

    def ratings(self, user: int) -> np.ndarray:
        """The user's 1-5 stars for every movie, from the dot product of latent tastes (the latent-factor model)."""
        return np.clip(3 + np.round(self._scaled_scores(user)), 1, 5).astype(np.int64)

    def rating(self, user: int, movie: int) -> int:
        return int(self.ratings(user)[movie])

    def liked(self, user: int) -> list[int]:
        """Movies the user rates 5: 3 + round(s) >= 5 exactly when s >= 1.5 (round half to even gives 2)."""
        return np.flatnonzero(self._scaled_scores(user) >= 1.5).tolist()


def build_world(seed: int, scale: str = "small") -> World:
    sizes = SCALES[scale]
    rng = random.Random(f"movie-world:{seed}:{scale}")
    people: dict[str, None] = {}
    while len(people) < sizes["people"]:
        people[f"{_syllable_name(rng, 2).title()} {_syllable_name(rng, rng.randint(2, 3)).title()}"] = None
    names = list(people)
    sixth = len(names) // 6
    directors, writers, actors = names[:sixth], names[sixth:2 * sixth], names[2 * sixth:]
    genre_factors = {g: [rng.gauss(0, 1) for _ in range(FACTORS)] for g in GENRES}
    titles: dict[str, None] = {}
    movies = []
    while len(movies) < sizes["movies"]:
        title = rng.choice((f"The {rng.choice(_TITLE_ADJECTIVES)} {rng.choice(_TITLE_WORDS)}",
                            f"{rng.choice(_TITLE_WORDS)} of {_syllable_name(rng, 2).title()}",
                            f"{_syllable_name(rng, 2).title()} {rng.choice(_TITLE_WORDS)}"))
        if title in titles:
            continue
        titles[title] = None
        genres = rng.sample(GENRES, rng.choice((1, 1, 2)))
        mean = [sum(genre_factors[g][k] for g in genres) / len(genres) for k in range(FACTORS)]
        factors = [0.6 * m + 0.5 * rng.gauss(0, 1) for m in mean]
        norm = math.sqrt(sum(f * f for f in factors)) or 1.0
        movies.append(Movie(
            title, rng.sample(directors, 1), rng.sample(writers, rng.choice((1, 1, 2))),
            rng.sample(actors, rng.randint(1, 4)), str(rng.randint(1930, 2015)), genres,
            rng.sample(TAGS, rng.randint(0, 3)), rng.choice(LANGUAGES), f"{rng.uniform(3, 9):.1f}",
            rng.choice(("famous", "popular", "unheard of")), [f / norm for f in factors]))
    users = []
    for _ in range(sizes["users"]):
        taste = [rng.gauss(0, 1) for _ in range(FACTORS)]
        norm = math.sqrt(sum(t * t for t in taste)) or 1.0
        users.append([t / norm * 1.6 for t in taste])
    return World(movies, users, seed)
