"""The Movie Dialog tasks generated from a synthetic world, written in the public layout (``data/movie_dialog.py``).

1. QA: the 11 question classes of the paper, several templates each; answers are every KB value that fits.
2. Recommendation: 1-8 movies a user rated 5, the answer another movie the same user rated 5.
3. QA + recommendation: 3 exchanges (a recommendation in a genre, a question about it, a similar movie).
4. Discussion: comment and reply pairs about movies that mention related KB entities; dev and test rank each
   true reply among the other replies and negatives (``task4_reddit_cand-{valid,test}.txt``).
The joint task trains on all four together (it has no files of its own in the public release either).

Users are split into training, development and test users, so recommendations are tested on unseen users.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from data import babi_format
from data.movie_dialog import TASK_DIRECTORIES
from data.movie_world import World, build_world

QUESTIONS: dict[str, tuple[str, ...]] = {
    "actor_to_movie": ("what movies did {x} star in?", "{x} appears in which movies?", "what films does {x} act in?"),
    "movie_to_actors": ("who starred in {x}?", "who acted in {x}?", "who are the actors in the film {x}?"),
    "movie_to_director": ("who directed {x}?", "who was the director of {x}?", "who is the director of the film {x}?"),
    "director_to_movie": ("what films did {x} direct?", "can you name a film directed by {x}?",
                          "which movies was {x} the director of?"),
    "movie_to_writer": ("who wrote {x}?", "who is the writer of {x}?", "who was {x} written by?"),
    "writer_to_movie": ("what films did {x} write?", "which movies were written by {x}?", "{x} wrote which films?"),
    "movie_to_tags": ("what is {x} about?", "what words describe {x}?", "describe {x} in a few words"),
    "tag_to_movie": ("what movies are about {x}?", "which films can be described by {x}?", "name a film about {x}"),
    "movie_to_year": ("when was {x} released?", "what year was {x} released?", "{x} came out in which year?"),
    "movie_to_genre": ("what is the genre of {x}?", "what kind of film is {x}?", "{x} is a film of which genre?"),
    "movie_to_language": ("what language is {x} in?", "which language is spoken in {x}?",
                          "in what language was {x} made?"),
}
RECOMMEND = ("{movies} are movies i really like. could you suggest a film?",
             "i enjoyed {movies}. what else should i watch?",
             "my favourite films are {movies}. any suggestions?")
RECOMMEND_GENRE = ("{movies} are movies i really like. i'm looking for a {genre} movie.",
                   "i loved {movies}. can you suggest a {genre} film?")
FOLLOW_UP = {"actors": "who does that star?", "director": "who directed that?", "year": "what year is that from?",
             "writer": "who wrote that?"}
SIMILAR = ("i like {actor} movies more. do you know anything else?", "i prefer films with {actor}. anything else?")
COMMENTS = ("just watched {movie} again, still holds up", "is {movie} worth watching?",
            "{movie} was on tv last night", "can we talk about {movie} for a second")
REPLIES = ("{entity} was brilliant in it", "you should see more of {entity}", "the best thing about it is {entity}",
           "honestly {entity} carried the whole film")
SIZES = {"tiny": {"qa": (300, 40, 40), "recs": (300, 40, 40), "qarecs": (150, 20, 20), "reddit": (150, 20, 20),
                  "negatives": 100},
         "small": {"qa": (4000, 400, 400), "recs": (4000, 400, 400), "qarecs": (2000, 200, 200),
                   "reddit": (2000, 200, 200), "negatives": 1000}}
SPLITS = ("train", "dev", "test")


@dataclass
class Indexes:
    by_relation: dict[str, dict[str, list[str]]]  # question class -> subject -> answers

    @classmethod
    def of(cls, world: World) -> Indexes:
        index: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for m in world.movies:
            for values, forward, backward in ((m.actors, "movie_to_actors", "actor_to_movie"),
                                              (m.directors, None, "director_to_movie"),
                                              (m.writers, "movie_to_writer", "writer_to_movie"),
                                              (m.tags, "movie_to_tags", "tag_to_movie")):
                for value in values:
                    if forward:
                        index[forward][m.title].append(value)
                    index[backward][value].append(m.title)
            index["movie_to_director"][m.title] = list(m.directors)
            index["movie_to_year"][m.title] = [m.year]
            index["movie_to_genre"][m.title] = list(m.genres)
            index["movie_to_language"][m.title] = [m.language]
        return cls({k: dict(v) for k, v in index.items()})


def _line(number: int, text: str, answers: list[str]) -> str:
    return f"{number} {text}\t{', '.join(answers)}"


def _split_of(rng: random.Random, sizes: tuple[int, int, int]) -> str:
    return rng.choices(SPLITS, weights=sizes)[0]


def qa_lines(world: World, indexes: Indexes, rng: random.Random, count: int) -> list[str]:
    kinds = sorted(QUESTIONS)
    lines = []
    for _ in range(count):
        kind = rng.choice(kinds)
        subject = rng.choice(sorted(indexes.by_relation[kind]))
        lines.append(_line(1, rng.choice(QUESTIONS[kind]).format(x=subject), indexes.by_relation[kind][subject]))
    return lines


def _movie_list(titles: list[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _attempts(count: int) -> range:
    """Bounded sampling: a world where too few users like enough movies is an error, not an endless loop."""
    return range(50 * count + 1000)


def _too_few(what: str, made: int, count: int) -> RuntimeError:
    return RuntimeError(f"only {made} of {count} {what} could be drawn: too few users like enough movies")


def recs_lines(world: World, users: list[int], rng: random.Random, count: int) -> list[str]:
    lines: list[str] = []
    for _ in _attempts(count):
        if len(lines) == count:
            return lines
        liked = world.liked(rng.choice(users))
        if len(liked) < 2:
            continue
        chosen = rng.sample(liked, min(len(liked) - 1, rng.randint(1, 8)))
        answer = rng.choice([i for i in liked if i not in chosen])
        text = rng.choice(RECOMMEND).format(movies=_movie_list([world.movies[i].title for i in chosen]))
        lines.append(_line(1, text, [world.movies[answer].title]))
    if len(lines) < count:
        raise _too_few("recommendation examples", len(lines), count)
    return lines


def qarecs_dialogs(world: World, indexes: Indexes, users: list[int], rng: random.Random, count: int) -> list[str]:
    lines: list[str] = []
    made = 0
    for _ in _attempts(count):
        if made == count:
            return lines
        liked = world.liked(rng.choice(users))
        if len(liked) < 3:
            continue
        chosen = rng.sample(liked, min(len(liked) - 2, rng.randint(1, 6)))
        rest = [i for i in liked if i not in chosen]
        target = world.movies[rng.choice(rest)]
        genre = rng.choice(target.genres)
        genre_answers = [world.movies[i].title for i in rest if genre in world.movies[i].genres]
        text = rng.choice(RECOMMEND_GENRE).format(movies=_movie_list([world.movies[i].title for i in chosen]),
                                                 genre=genre)
        follow = rng.choice(sorted(FOLLOW_UP))
        facts = {"actors": target.actors, "director": target.directors, "year": [target.year],
                 "writer": target.writers}[follow]
        actor = rng.choice(target.actors)
        similar = [t for t in indexes.by_relation["actor_to_movie"][actor] if t != target.title]
        if not similar:
            continue
        lines += [_line(1, text, genre_answers), _line(2, FOLLOW_UP[follow], facts),
                  _line(3, rng.choice(SIMILAR).format(actor=actor), similar)]
        made += 1
    if made < count:
        raise _too_few("QA+recommendation dialogs", made, count)
    return lines


def reddit_dialogs(world: World, rng: random.Random, count: int) -> tuple[list[str], list[str]]:
    """Discussion dialogs of 1-3 exchanges and the replies they use (for the candidate files)."""
    lines, replies = [], []
    for _ in range(count):
        movie = rng.choice(world.movies)
        related = movie.actors + movie.directors + movie.tags
        for number in range(1, rng.randint(1, 3) + 1):
            comment = rng.choice(COMMENTS).format(movie=movie.title) if number == 1 else \
                f"what about {rng.choice(related)}?"
            reply = rng.choice(REPLIES).format(entity=rng.choice(related))
            lines.append(_line(number, comment, [reply]))
            replies.append(reply)
    return lines, replies


@dataclass(frozen=True)
class MoviePlan:
    seed: int = 0
    scale: str = "small"


def generate(plan: MoviePlan, out: str | Path) -> list[Path]:
    """Write entities, KB, the four task folders and task 4's candidate files under ``out``."""
    out = Path(out)
    world = build_world(plan.seed, plan.scale)
    indexes = Indexes.of(world)
    sizes = SIZES[plan.scale]
    rng = random.Random(f"movie-tasks:{plan.seed}:{plan.scale}")
    users = list(range(len(world.users)))
    rng.shuffle(users)
    held_out = max(20, len(users) // 100)  # development and test users each (1% of users, as the paper)
    user_split = {"dev": users[:held_out], "test": users[held_out:2 * held_out], "train": users[2 * held_out:]}
    written: list[Path] = []

    def write(path: Path, lines: list[str]) -> None:
        babi_format.write_text_atomic(path, "\n".join(lines) + "\n")
        written.append(path)

    write(out / "entities.txt", world.entities())
    kb = []
    for title, relation, values in world.triples():
        kb.append(f"{len(kb) + 1} {title} {relation} {', '.join(values)}")
    write(out / "movie_kb.txt", kb)
    makers: dict[int, Callable[[str, int], list[str]]] = {
        1: lambda split, n: qa_lines(world, indexes, random.Random(f"{plan.seed}:qa:{split}"), n),
        2: lambda split, n: recs_lines(world, user_split[split], random.Random(f"{plan.seed}:recs:{split}"), n),
        3: lambda split, n: qarecs_dialogs(world, indexes, user_split[split],
                                           random.Random(f"{plan.seed}:qarecs:{split}"), n),
    }
    for task, key in ((1, "qa"), (2, "recs"), (3, "qarecs")):
        for split, n in zip(SPLITS, sizes[key], strict=True):
            name = TASK_DIRECTORIES[task]
            write(out / name / f"{name}_{split}.txt", makers[task](split, n))
    negatives_rng = random.Random(f"{plan.seed}:reddit:negatives")
    for split, n in zip(SPLITS, sizes["reddit"], strict=True):
        lines, replies = reddit_dialogs(world, random.Random(f"{plan.seed}:reddit:{split}"), n)
        write(out / "task4_reddit" / f"task4_reddit_{split}.txt", lines)
        if split != "train":
            _, negatives = reddit_dialogs(world, negatives_rng, sizes["negatives"])
            candidates = list(dict.fromkeys(replies + negatives))
            suffix = "valid" if split == "dev" else "test"
            write(out / "task4_reddit" / f"task4_reddit_cand-{suffix}.txt", candidates)
    return written
