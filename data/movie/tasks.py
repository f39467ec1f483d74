"""The Movie Dialog tasks generated from a synthetic world, written in the public layout (``data/movie_dialog.py``).

1. QA: the 11 question classes of the paper, several templates each; answers are every KB value that fits.
2. Recommendation: 1-8 movies a user rated 5, the answer another movie the same user rated 5.
3. QA + recommendation: 3 exchanges, as Section 2.3 and Table 3: one recommended movie of the asked genre that the
   user also likes, a question about it (its answers every KB value that fits), then one other movie of an actor
   of the first.
4. Discussion: comment and reply pairs about movies that mention related KB entities; dev and test rank each
   true reply among the other replies and negatives (``task4_reddit_cand-{valid,test}.txt``).
The joint task trains on all four together (it has no files of its own in the public release either).

Users are split into training, development and test users, so recommendations are tested on unseen users.

Every example is a function of (seed, scale, task, split, index) only, so files are rendered in shards, in this
process or in parallel through Beam, with the same bytes; ``--scale paper`` (about 75k entities and 3M training
dialogs) takes the Beam path.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from data import sharded_files
from data.atomic import one_writer, staged_files, write_text_atomic
from data.movie.reader import CANDIDATE_SPLITS, TASK_DIRECTORIES
from data.movie.world import Calibration, Movie, World, build_world

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
# A QA question's preamble naming another entity (Calibration.qa_distractor).
DISTRACTORS = ("i just watched {e}.", "i'm a big fan of {e}.", "my friend keeps talking about {e}.",
               "after {e} i got curious.")
# General remarks about a film, no entity named: any of them would answer any comment (many plausible replies).
# Compositional, so that few remarks repeat.
REMARK_OPENERS = ("honestly", "to be fair", "i think", "for me", "in my opinion", "not gonna lie", "personally",
                  "funny enough", "the way i see it", "strangely", "i swear", "to me")
REMARK_BODIES = ("the pacing drags in the middle", "the ending ruined it", "the soundtrack is underrated",
                 "it gets better on a second watch", "the dialogue feels dated now", "the first half is perfect",
                 "the cinematography is gorgeous", "it was overhyped", "it made me cry", "nobody remembers it",
                 "the trailer spoiled everything", "it aged really well", "the villain steals every scene",
                 "the script needed another draft", "it is a guilty pleasure", "the director's cut is better",
                 "the book was better", "the effects hold up", "it felt too long", "the cast had great chemistry",
                 "it is better than the sequel", "the opening scene is iconic", "it was a box office flop",
                 "the twist is obvious", "the score gives me chills", "it deserved an oscar",
                 "it is the most quotable film ever", "the costumes are amazing", "it is weirdly comforting",
                 "my dad loves it")
REMARK_CLOSERS = ("", "", "", " though", " tbh", " imo", " for sure", " haha", " if you ask me", " honestly")
# Examples (tasks 1-2) or dialogs (tasks 3-4) per split (train, dev, test); task 4's negative candidates.
SIZES = {"tiny": {"qa": (300, 40, 40), "recs": (300, 40, 40), "qarecs": (150, 20, 20), "reddit": (150, 20, 20),
                  "negatives": 100},
         "small": {"qa": (4000, 400, 400), "recs": (4000, 400, 400), "qarecs": (2000, 200, 200),
                   "reddit": (2000, 200, 200), "negatives": 1000},
         # Section 2: ~96k/10k/10k QA, 1M/10k/10k for each of tasks 2-3, ~945k/10k/10k Reddit, 10k negatives.
         "paper": {"qa": (96_000, 10_000, 10_000), "recs": (1_000_000, 10_000, 10_000),
                   "qarecs": (1_000_000, 10_000, 10_000), "reddit": (945_000, 10_000, 10_000),
                   "negatives": 10_000}}
SPLITS = ("train", "dev", "test")
TASK_KEYS = {1: "qa", 2: "recs", 3: "qarecs", 4: "reddit"}
SHARD_SIZE = 10_000
# Draws of a user before giving up on an example: a world where users like too few movies is an error, not a hang.
MAX_ATTEMPTS = 1000


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


@dataclass
class TaskWorld:
    """What every example of a (seed, scale) draws from; built once per process."""

    world: World
    indexes: Indexes
    subjects: dict[str, list[str]]  # question class -> its subjects, sorted
    users: dict[str, list[int]]  # split -> its users


@lru_cache(maxsize=2)
def context(seed: int, scale: str, calibration: Calibration = Calibration()) -> TaskWorld:  # noqa: B008 (frozen)
    world = build_world(seed, scale, calibration)
    indexes = Indexes.of(world)
    users = list(range(len(world.users)))
    random.Random(f"movie-tasks:{seed}:{scale}").shuffle(users)
    held_out = max(20, len(users) // 100)  # development and test users each (1% of users, as the paper)
    return TaskWorld(world, indexes, {kind: sorted(subjects) for kind, subjects in indexes.by_relation.items()},
                  {"dev": users[:held_out], "test": users[held_out:2 * held_out], "train": users[2 * held_out:]})


def qa_lines(ctx: TaskWorld, split: str, rng: random.Random) -> list[str]:
    """A question of one class about one subject; with ``qa_distractor``'s share, a preamble names another movie
    or person first (the answers stay the asked subject's)."""
    kind = rng.choice(sorted(QUESTIONS))
    subject = rng.choice(ctx.subjects[kind])
    question = rng.choice(QUESTIONS[kind]).format(x=subject)
    if rng.random() < ctx.world.calibration.qa_distractor:
        other = rng.choice(ctx.world.movies)
        named = rng.choice([other.title, *other.actors, *other.directors])
        if named != subject:
            question = f"{rng.choice(DISTRACTORS).format(e=named)} {question}"
    return [_line(1, question, ctx.indexes.by_relation[kind][subject])]


def _movie_list(titles: list[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _too_few(what: str) -> RuntimeError:
    return RuntimeError(f"no {what} after {MAX_ATTEMPTS} draws: too few users like enough movies")


def _likings(ctx: TaskWorld, split: str, rng: random.Random, at_least: int) -> Iterator[list[int]]:
    """The liked movies of users of ``split`` drawn at random, those who like ``at_least`` (bounded draws)."""
    for _ in range(MAX_ATTEMPTS):
        liked = ctx.world.liked(rng.choice(ctx.users[split]))
        if len(liked) >= at_least:
            yield liked


def recs_lines(ctx: TaskWorld, split: str, rng: random.Random) -> list[str]:
    world = ctx.world
    for liked in _likings(ctx, split, rng, 2):
        chosen = rng.sample(liked, min(len(liked) - 1, rng.randint(1, 8)))
        answer = rng.choice([i for i in liked if i not in chosen])
        text = rng.choice(RECOMMEND).format(movies=_movie_list([world.movies[i].title for i in chosen]))
        return [_line(1, text, [world.movies[answer].title])]
    raise _too_few("recommendation example")


def qarecs_lines(ctx: TaskWorld, split: str, rng: random.Random) -> list[str]:
    world = ctx.world
    for liked in _likings(ctx, split, rng, 3):
        chosen = rng.sample(liked, min(len(liked) - 2, rng.randint(1, 6)))
        rest = [i for i in liked if i not in chosen]
        target = world.movies[rng.choice(rest)]
        genre = rng.choice(target.genres)
        text = rng.choice(RECOMMEND_GENRE).format(movies=_movie_list([world.movies[i].title for i in chosen]),
                                                 genre=genre)
        follow = rng.choice(sorted(FOLLOW_UP))
        facts = {"actors": target.actors, "director": target.directors, "year": [target.year],
                 "writer": target.writers}[follow]
        actor = rng.choice(target.actors)
        similar = [t for t in ctx.indexes.by_relation["actor_to_movie"][actor] if t != target.title]
        if not similar:
            continue
        return [_line(1, text, [target.title]), _line(2, FOLLOW_UP[follow], facts),
                _line(3, rng.choice(SIMILAR).format(actor=actor), [rng.choice(similar)])]
    raise _too_few("QA+recommendation dialog")


def _remark(rng: random.Random) -> str:
    return f"{rng.choice(REMARK_OPENERS)} {rng.choice(REMARK_BODIES)}{rng.choice(REMARK_CLOSERS)}"


def _reply(movie: Movie, named: str, calibration: Calibration, rng: random.Random) -> str:
    """A reply to a comment about ``movie`` naming ``named``: one repeating ``named`` (``reddit_echo``), one naming
    another entity of the movie (``reddit_related``), or a general remark."""
    draw = rng.random()
    if draw < calibration.reddit_echo:
        return rng.choice(REPLIES).format(entity=named)
    others = [e for e in movie.actors + movie.directors + movie.tags if e != named]
    if draw < calibration.reddit_echo + calibration.reddit_related and others:
        return rng.choice(REPLIES).format(entity=rng.choice(others))
    return _remark(rng)


def reddit_lines(ctx: TaskWorld, split: str, rng: random.Random) -> list[str]:
    """A discussion dialog of 1-3 exchanges about one movie."""
    movie = rng.choice(ctx.world.movies)
    related = movie.actors + movie.directors + movie.tags
    lines = []
    for number in range(1, rng.randint(1, 3) + 1):
        named = movie.title if number == 1 else rng.choice(related)
        comment = rng.choice(COMMENTS).format(movie=named) if number == 1 else f"what about {named}?"
        lines.append(_line(number, comment, [_reply(movie, named, ctx.world.calibration, rng)]))
    return lines


MAKERS: dict[int, Callable[[TaskWorld, str, random.Random], list[str]]] = {
    1: qa_lines, 2: recs_lines, 3: qarecs_lines, 4: reddit_lines}


def example_lines(seed: int, scale: str, task: int, split: str, index: int,
                  calibration: Calibration = Calibration()) -> list[str]:  # noqa: B008 (frozen)
    """Example (or dialog) ``index`` of a task's split: a function of its arguments only."""
    rng = random.Random(f"movie-tasks:{seed}:{scale}:{task}:{split}:{index}")
    return MAKERS[task](context(seed, scale, calibration), split, rng)


@dataclass(frozen=True)
class MoviePlan:
    seed: int = 0
    scale: str = "small"
    calibration: Calibration = Calibration()  # noqa: RUF009 (frozen, hashable)

    def count(self, task: int, split: str) -> int:
        return SIZES[self.scale][TASK_KEYS[task]][SPLITS.index(split)]

    @property
    def total_examples(self) -> int:
        return sum(self.count(task, split) for task in TASK_KEYS for split in SPLITS)


def estimated_bytes(plan: MoviePlan, sample: int = 8) -> int:
    """About how many bytes the task files take: the first ``sample`` examples of each task's split rendered, their
    mean size times the split's count. The entities, KB and candidate files are a small part beside them."""
    size = 0
    for task in TASK_KEYS:
        for split in SPLITS:
            count = plan.count(task, split)
            taken = min(sample, count)
            if taken:
                rendered = sum(len(line.encode()) + 1 for index in range(taken)
                               for line in example_lines(plan.seed, plan.scale, task, split, index, plan.calibration))
                size += rendered * count // taken
    return size


def task_file_name(task: int, split: str) -> str:
    name = TASK_DIRECTORIES[task]
    return f"{name}/{name}_{split}.txt"


@dataclass(frozen=True)
class _ShardRenderer:
    """Picklable for Beam's worker processes."""

    plan: MoviePlan

    def __call__(self, shard: sharded_files.Shard) -> str:
        task, split = shard.key
        lines = [line for index in range(shard.start, shard.stop)
                 for line in example_lines(self.plan.seed, self.plan.scale, task, split, index,
                                           self.plan.calibration)]
        return "\n".join(lines) + "\n"


def shards(plan: MoviePlan) -> list[sharded_files.Shard]:
    return [shard for task in TASK_KEYS for split in SPLITS
            for shard in sharded_files.shards_of(task_file_name(task, split), (task, split),
                                                 plan.count(task, split), SHARD_SIZE)]


def reddit_candidates(plan: MoviePlan, split: str) -> list[str]:
    """Task 4's candidates for dev or test: the split's true replies, then the negatives (other replies)."""
    ctx = context(plan.seed, plan.scale, plan.calibration)
    replies = [line.split("\t", 1)[1] for index in range(plan.count(4, split))
               for line in example_lines(plan.seed, plan.scale, 4, split, index, plan.calibration)]
    negatives = []
    for i in range(SIZES[plan.scale]["negatives"]):
        rng = random.Random(f"movie-tasks:{plan.seed}:{plan.scale}:negative:{split}:{i}")
        movie = rng.choice(ctx.world.movies)
        negatives.append(_reply(movie, rng.choice([movie.title, *movie.actors, *movie.directors, *movie.tags]),
                                plan.calibration, rng))
    return list(dict.fromkeys(replies + negatives))


def generate(plan: MoviePlan, out: str | Path, runner: str = "auto", beam_args: Sequence[str] = ()) -> list[Path]:
    """Write entities, KB, the four task folders and task 4's candidate files under ``out``.

    The task files are rendered in shards, in this process or through Beam (``runner``; ``auto`` picks Beam above
    ``sharded_files.BEAM_THRESHOLD`` examples); both write the same bytes.
    """
    out = Path(out)
    sharded_files.choose_runner(runner, plan.total_examples, beam_args)  # a bad runner fails before any work
    world = context(plan.seed, plan.scale, plan.calibration).world
    with one_writer(out), staged_files(out) as staging:  # one writer; every file or none
        sharded_files.clear_staging(out)
        root = Path(staging)
        written = sharded_files.write_files(shards(plan), _ShardRenderer(plan), root, runner, beam_args)

        def write(path: Path, lines: list[str]) -> None:
            write_text_atomic(path, "\n".join(lines) + "\n")
            written.append(path)

        write(root / "entities.txt", world.entities())
        write(root / "movie_kb.txt", [f"{number} {title} {relation} {', '.join(values)}"
                                      for number, (title, relation, values) in enumerate(world.triples(), start=1)])
        for split, suffix in CANDIDATE_SPLITS.items():
            write(root / "task4_reddit" / f"task4_reddit_cand-{suffix}.txt", reddit_candidates(plan, split))
    return [out / path.relative_to(root) for path in written]
