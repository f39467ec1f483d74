"""A synthetic movie world of the shape of Dodge et al.'s (OMDb + MovieLens): movies with directors, writers,
actors, years, genres, tags, languages, IMDb ratings and votes, and users who rate some movies, so that
recommendations are learnable from other users' tastes.

Who rates what has MovieLens' shape (:class:`Calibration`): a movie's popularity falls off as a power of its rank,
so a few movies are rated by many users and most by few; a user rates a heavy-tailed number of movies (at least
``MIN_RATINGS``, as MovieLens keeps users with 20 ratings or more), chosen by popularity and by their tastes; and
the movies a user rates 5 are the best of those by a latent-factor model of tastes.

Names are made of syllables, so entities are unique and carry no real-world knowledge. Everything depends on the
seed, the scale and the calibration only.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from data.settings import named_settings

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
MIN_RATINGS = 20  # MovieLens keeps users with at least 20 ratings


@dataclass(frozen=True)
class Calibration:
    """The generator's knobs that set how hard each task is, with the defaults that put the paper's non-learning
    baselines (its QA system, SVD and IR) near its figures at ``--scale paper`` (docs/movie.md has the figures).

    - ``popularity_exponent``: a movie's share of ratings falls off as rank^-exponent (Zipf; MovieLens' ratings
      are that skewed); 0 makes every movie as likely to be rated.
    - ``ratings_per_user``: the median number of movies a user rates (log-normal, spread ``ratings_spread``, at
      least ``MIN_RATINGS``).
    - ``taste_weight``: how much a user's tastes, beside popularity, choose which movies they rate.
    - ``liked_share``: the share of a user's rated movies rated 5 (their best by the latent-factor tastes).
    - ``qa_distractor``: the share of QA questions that first mention another KB entity ("i just watched X. who
      directed Y?"): a parser that takes the longest entity answers about the wrong one.
    - ``reddit_echo``: the share of discussion replies that repeat the entity the comment names (a reply a
      word-overlap retriever finds); ``reddit_related``: the share that name another KB entity of the movie (found
      through the KB); the rest are general remarks about films, any of which would do (many plausible replies).
    """

    popularity_exponent: float = 0.75
    ratings_per_user: int = 70
    ratings_spread: float = 0.8
    taste_weight: float = 1.0
    liked_share: float = 0.2
    qa_distractor: float = 0.5
    reddit_echo: float = 0.25
    reddit_related: float = 0.1

    def __post_init__(self) -> None:
        for name in ("popularity_exponent", "ratings_spread", "taste_weight"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"calibration {name} must be a number >= 0, got {value!r}")
        for name in ("liked_share", "qa_distractor", "reddit_echo", "reddit_related"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"calibration {name} must be a share between 0 and 1, got {value!r}")
        if self.reddit_echo + self.reddit_related > 1:
            raise ValueError(f"calibration reddit_echo + reddit_related must be at most 1, got "
                             f"{self.reddit_echo} + {self.reddit_related}")
        if isinstance(self.ratings_per_user, bool) or not isinstance(self.ratings_per_user, int) \
                or self.ratings_per_user < 1:
            raise ValueError(f"calibration ratings_per_user must be a whole number >= 1, got "
                             f"{self.ratings_per_user!r}")

    @classmethod
    def parse(cls, settings: list[str] | tuple[str, ...]) -> Calibration:
        """``NAME=VALUE`` settings over the defaults; a bad name or value is a ``ValueError`` naming it."""
        fields = {f.name: f.type for f in cls.__dataclass_fields__.values()}
        values: dict[str, float | int] = {}
        for setting, name, text in named_settings(settings, list(fields), "calibration setting"):
            try:
                values[name] = int(text) if fields[name] == "int" else float(text)
            except ValueError:
                raise ValueError(f"calibration setting {setting!r}: {text!r} is not a number") from None
        return cls(**values)


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
    popularity: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))  # each movie's share of ratings
    calibration: Calibration = field(default_factory=Calibration)
    _liked: dict[int, list[int]] = field(repr=False, default_factory=dict)

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

    def _scores(self, user: int) -> np.ndarray:
        """The latent-factor model: how much the user likes each movie."""
        return self._movie_factors @ np.asarray(self.users[user], dtype=np.float64)

    def rated(self, user: int) -> np.ndarray:
        """The movies the user rates, drawn without replacement by popularity and tastes (Gumbel top-k over
        log popularity + taste_weight * score), their number log-normal about the calibration's median."""
        c = self.calibration
        digest = hashlib.blake2b(f"movie-user:{self.seed}:{user}".encode(), digest_size=8).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        wanted = c.ratings_per_user * math.exp(c.ratings_spread * rng.standard_normal())
        count = min(len(self.movies) // 2, max(MIN_RATINGS, round(wanted)))
        keys = np.log(self.popularity) + c.taste_weight * self._scores(user) + rng.gumbel(size=len(self.movies))
        return np.argpartition(-keys, count - 1)[:count]

    def liked(self, user: int) -> list[int]:
        """The movies the user rates 5: the ``liked_share`` of their rated movies they like best (at least 3),
        in the order of the movies. Computed once per user."""
        if user not in self._liked:
            rated = self.rated(user)
            best = max(3, round(self.calibration.liked_share * len(rated)))
            order = np.argsort(-self._scores(user)[rated], kind="stable")[:best]
            self._liked[user] = sorted(rated[order].tolist())
        return self._liked[user]


def build_world(seed: int, scale: str = "small", calibration: Calibration | None = None) -> World:
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
    calibration = calibration or Calibration()
    ranks = np.array(rng.sample(range(len(movies)), len(movies)), dtype=np.float64)
    popularity = (ranks + 1) ** -calibration.popularity_exponent
    return World(movies, users, seed, popularity / popularity.sum(), calibration)
