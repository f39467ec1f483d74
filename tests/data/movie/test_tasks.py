"""The synthetic movie world and its tasks, read back through the public-layout reader."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from data import sharded_files
from data.movie import tasks as movie_tasks
from data.movie.reader import discover_movie_corpus, read_candidates, read_dialogs, read_kb
from data.movie.tasks import MoviePlan, generate
from data.movie.world import build_world

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


def _fill(templates: tuple[str, ...], text: str) -> dict[str, str]:
    """The values a generator template put in ``text`` ({movies}, {genre}, {actor})."""
    for template in templates:
        pattern = re.escape(template)
        for name in ("movies", "genre", "actor"):
            pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>.+)")
        if match := re.fullmatch(pattern, text):
            return match.groupdict()
    raise AssertionError(f"no template wrote {text!r}")


def test_qarecs_replies_are_one_movie_then_its_facts_then_one_movie_as_in_table_3(corpus: Path) -> None:
    """Section 2.3: a recommendation in the asked genre, a question about it, one alternative with the actor."""
    ctx = movie_tasks.context(PLAN.seed, PLAN.scale)
    world = ctx.world
    number = {m.title: i for i, m in enumerate(world.movies)}
    liked_sets = [set(world.liked(u)) for u in ctx.users["test"]]
    movies = discover_movie_corpus(corpus)
    dialogs = read_dialogs(movies.tasks[3]["test"], movies.entity_list())
    for dialog in dialogs:
        first, second, third = dialog.exchanges
        asked = _fill(movie_tasks.RECOMMEND_GENRE, first.text)
        mentioned = {number[title] for title in re.split(", | and ", asked["movies"])}
        assert len(first.answers) == 1, first
        movie = world.movies[number[first.answers[0]]]
        assert asked["genre"] in movie.genres
        assert number[movie.title] not in mentioned
        assert any(mentioned | {number[movie.title]} <= liked for liked in liked_sets)  # one test user likes them all
        kind = {question: kind for kind, question in movie_tasks.FOLLOW_UP.items()}[second.text]
        facts = {"actors": movie.actors, "director": movie.directors, "year": [movie.year], "writer": movie.writers}
        assert list(second.answers) == facts[kind]  # about the first reply
        actor = _fill(movie_tasks.SIMILAR, third.text)["actor"]
        assert len(third.answers) == 1 and third.answers[0] != movie.title, third
        assert actor in movie.actors and actor in world.movies[number[third.answers[0]]].actors
    assert len(dialogs) == PLAN.count(3, "test")


def test_reddit_candidates_hold_every_true_reply(corpus: Path) -> None:
    movies = discover_movie_corpus(corpus)
    candidates = set(read_candidates(movies.candidates["test"]))
    replies = {a for d in read_dialogs(movies.tasks[4]["test"]) for e in d.exchanges for a in e.answers}
    assert replies <= candidates and len(candidates) > len(replies)


def test_same_seed_same_bytes(corpus: Path, tmp_path: Path) -> None:
    generate(PLAN, tmp_path)
    for path in corpus.rglob("*.txt"):
        assert path.read_bytes() == (tmp_path / path.relative_to(corpus)).read_bytes(), path


def test_beam_path_writes_the_same_files_as_the_local_one(corpus: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(movie_tasks, "SHARD_SIZE", 70)  # several shards per file, joined in order
    generate(PLAN, tmp_path, runner="beam", beam_args=("--direct_running_mode=in_memory",))
    produced = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert produced == sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file())  # no staging left
    for name in produced:
        assert (tmp_path / name).read_bytes() == (corpus / name).read_bytes(), name


def test_paper_scale_has_the_papers_sizes_and_takes_the_beam_path(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    plan = MoviePlan(seed=0, scale="paper")
    assert plan.count(1, "train") == 96_000 and plan.count(2, "train") == plan.count(3, "train") == 1_000_000
    assert all(plan.count(task, split) == 10_000 for task in (1, 2, 3, 4) for split in ("dev", "test"))
    assert sharded_files.choose_runner("auto", plan.total_examples) == "beam"
    assert sharded_files.choose_runner("auto", PLAN.total_examples) == "local"
    with pytest.raises(ValueError, match="runner"):
        generate(PLAN, tmp_path, runner="spark")
    assert not any(tmp_path.iterdir())  # the bad runner failed before writing anything


def test_an_example_depends_on_its_index_only() -> None:
    first = [movie_tasks.example_lines(PLAN.seed, PLAN.scale, 3, "train", i) for i in range(5)]
    assert [movie_tasks.example_lines(PLAN.seed, PLAN.scale, 3, "train", i) for i in (4, 2)] == [first[4], first[2]]
    assert all(len(lines) == 3 for lines in first) and len({tuple(lines) for lines in first}) == 5


def test_a_world_where_nobody_likes_enough_movies_is_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(movie_tasks.World, "liked", lambda self, user: [0])
    with pytest.raises(RuntimeError, match="too few users like enough movies"):
        movie_tasks.example_lines(PLAN.seed, PLAN.scale, 2, "train", 0)


def test_validate_and_stats_understand_the_movie_layout(corpus: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from data.stats import movie_directory_stats
    from data.validate import validate_movie_directory
    from pipeline.cli import main

    report = validate_movie_directory(corpus)
    assert report.passes(strict=True), report.format()
    assert report.dialogs == sum(len(read_dialogs(p)) for s in discover_movie_corpus(corpus).tasks.values()
                                 for p in s.values())
    stats = movie_directory_stats(corpus)
    assert stats["layout"] == "movie-dialog" and stats["tasks"]["1"]["dialogs"]["train"] == 300
    assert "task 3 (task3_qarecs)" in CliRunner().invoke(main, ["stats", str(corpus)]).output
    copy = tmp_path / "movies"
    shutil.copytree(corpus, copy)
    path = copy / "task2_recs" / "task2_recs_dev.txt"
    lines = path.read_text().split("\n")
    path.write_text("\n".join([lines[0], "2 no tab here", *lines[1:]]))
    result = CliRunner().invoke(main, ["validate", str(copy)])
    assert result.exit_code == 1 and f"{path}:2: no TAB between the text and its answers" in result.output


def test_calibration_settings_are_named_and_checked() -> None:
    from data.movie.world import Calibration

    assert Calibration.parse(["qa_distractor=0.3", "ratings_per_user=40"]) == Calibration(qa_distractor=0.3,
                                                                                       ratings_per_user=40)
    for bad, named in (("qa=1", "NAME one of"), ("qa_distractor=x", "not a number"),
                       ("reddit_echo=1.5", "between 0 and 1"), ("popularity_exponent=-1", ">= 0")):
        with pytest.raises(ValueError, match=named):
            Calibration.parse([bad])
    with pytest.raises(ValueError, match="at most 1"):
        Calibration(reddit_echo=0.7, reddit_related=0.5)


def test_ratings_have_a_skewed_popularity_and_at_least_twenty_per_user() -> None:
    """MovieLens' shape: a few movies take many of the ratings (the top tenth far more than a tenth of them) and
    every user rates at least MIN_RATINGS; with exponent 0 popularity is flat."""
    from data.movie.world import MIN_RATINGS, Calibration

    def top_tenth_share(exponent: float) -> float:
        world = build_world(0, "small", Calibration(popularity_exponent=exponent, taste_weight=0.0))
        rated = np.concatenate([world.rated(u) for u in range(300)])
        assert min(len(world.rated(u)) for u in range(300)) >= MIN_RATINGS
        counts = np.sort(np.bincount(rated, minlength=len(world.movies)))[::-1]
        return counts[: len(counts) // 10].sum() / counts.sum()

    assert top_tenth_share(1.0) > 0.3 and top_tenth_share(0.0) < 0.15


def test_qa_distractors_name_another_entity_before_the_question() -> None:
    from data.movie.world import Calibration

    calibration = Calibration(qa_distractor=1.0)
    ctx = movie_tasks.context(PLAN.seed, PLAN.scale, calibration)
    preambles = [re.escape(d).replace(re.escape("{e}"), "(?P<e>.+)") for d in movie_tasks.DISTRACTORS]
    named = 0
    for index in range(40):
        (line,) = movie_tasks.example_lines(PLAN.seed, PLAN.scale, 1, "train", index, calibration)
        text, answers = line.removeprefix("1 ").split("\t")
        match = next((m for p in preambles if (m := re.match(p + " ", text))), None)
        if match:
            named += 1
            question = text[match.end():]
            kind = next(k for k, templates in movie_tasks.QUESTIONS.items() for t in templates
                        if re.fullmatch(re.escape(t).replace(re.escape("{x}"), "(.+)"), question))
            subject = re.fullmatch(next(re.escape(t).replace(re.escape("{x}"), "(.+)")
                                        for t in movie_tasks.QUESTIONS[kind]
                                        if re.fullmatch(re.escape(t).replace(re.escape("{x}"), "(.+)"), question)),
                                   question).group(1)
            assert answers.split(", ") == ctx.indexes.by_relation[kind][subject]  # about the asked subject
    assert named >= 35  # all but a preamble that would name the subject itself


def test_reddit_replies_echo_relate_or_remark_in_the_calibrated_shares() -> None:
    from data.movie.world import Calibration

    def replies(calibration: Calibration) -> list[tuple[str, str]]:
        pairs = []
        for index in range(30):
            for line in movie_tasks.example_lines(PLAN.seed, PLAN.scale, 4, "train", index, calibration):
                comment, reply = line.split(" ", 1)[1].split("\t")
                pairs.append((comment, reply))
        return pairs

    comments = [re.escape(c).replace(re.escape("{movie}"), "(.+)") for c in movie_tasks.COMMENTS]
    comments.append("what about (.+)\\?")
    for comment, reply in replies(Calibration(reddit_echo=1.0, reddit_related=0.0)):
        named = next(m.group(1) for pattern in comments if (m := re.fullmatch(pattern, comment)))
        assert reply in {t.format(entity=named) for t in movie_tasks.REPLIES}, (comment, reply)
    remarks = replies(Calibration(reddit_echo=0.0, reddit_related=0.0))
    assert all(reply.split()[0] in {o.split()[0] for o in movie_tasks.REMARK_OPENERS} for _, reply in remarks)
