"""The `dialog` pipeline on a Movie Dialog corpus (the tiny world), run once as a user runs it (`dialog generate
movies --scale tiny`, then `dialog pipeline --quick` in a process of its own, stderr to a file as a log is, no
--quiet): examples per exchange, the joint MemN2N trained from the stream (``models.movie.streamed``, tested here
rather than on its own: a run costs most of the time), hits@k per task, the blessed model pushed and answering raw
text. The tiny world's training split is smaller than one batch of the quick profile: it trains on partial batches."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import tensorflow as tf

from data.movie.tasks import MoviePlan, generate
from models.movie.profiles import PROFILES
from models.movie.streamed import StreamedConfig
from pipeline.local_runner import paths
from pipeline.summary import run_summary

QUICK = PROFILES["quick"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Before, the epoch had 0 steps (the stream shorter than one execution of 8 steps) and Keras' epoch line failed
    with `math domain error` when stderr was a file."""
    corpus, root = tmp_path_factory.mktemp("movies"), tmp_path_factory.mktemp("run")
    log = root / "stderr.log"
    generate(MoviePlan(seed=0, scale="tiny"), corpus, runner="local")
    with open(log, "w") as stderr:
        ran = subprocess.run([sys.executable, "-m", "pipeline.cli", "pipeline", "--quick", "--data", str(corpus),
                              "--root", str(root / "r")], stdout=subprocess.PIPE, stderr=stderr, text=True,
                             check=False)
    assert ran.returncode == 0, log.read_text()[-3000:]
    located = paths((root / "r").resolve())
    return {**located, "printed": json.loads(ran.stdout.strip().splitlines()[-1]),
            "summary": run_summary(located["metadata"], QUICK.products()), "corpus": corpus}


@pytest.fixture(scope="module")
def served(finished: dict):
    """The pushed model, loaded once for the tests that call its signatures."""
    return tf.saved_model.load(finished["summary"]["pushed_model"])


def test_examples_are_exchanges_with_the_candidate_set_beside_them(finished: dict) -> None:
    (examples,) = (finished["pipeline_root"] / "MovieExampleGen" / "examples").glob("*")
    resources = json.loads((examples / "corpus" / "movie_resources.json").read_text())
    assert resources["tasks"] == [1, 2, 3, 4]
    ranges = resources["candidates"]["ranges"]
    assert ranges["entities"] == [0, len(resources["entities"])] and set(ranges) == {"entities", "dev", "test"}
    for split in ("train", "eval", "test"):
        assert list((examples / f"Split-{split}").glob("*.gz"))


def test_each_task_is_a_slice_with_hits_at_k_and_the_model_is_pushed(finished: dict) -> None:
    summary = finished["summary"]
    slices = summary["slices"]
    for task in ("movie-qa", "movie-recs", "movie-qarecs", "movie-reddit"):
        for split in ("dev", "test"):
            assert {"per_response_accuracy", "hits_at_10", "hits_at_100"} <= set(slices[f"split={split},task={task}"])
    assert {f"task=movie-qarecs,turn={turn}" for turn in range(3)} <= set(slices)
    # Learned from the stream: QA far above chance (hits@10 among ~500 entities: 2%). The accuracy of the profiles
    # is measured in docs/results.md, not here.
    assert slices["task=movie-qa"]["hits_at_10"] > 10, slices["task=movie-qa"]
    assert summary["blessed"] and summary["pushed_model"]


def test_the_pushed_model_ranks_raw_text_as_the_evaluator_ranks_examples(finished: dict, served) -> None:
    """Raw text in (the dictionary and the KB lookup are inside the model): the same ranking as the examples the
    Evaluator reads, given the same candidates (all of them: an example's range set empty)."""
    from data.movie.reader import discover_movie_corpus
    from models.movie.examples import MovieData
    from models.movie.records import CANDIDATE_RANGE, MovieCandidates, Parser, movie_tf_examples

    loaded = served
    data = MovieData(discover_movie_corpus(finished["corpus"]))
    exchanges = data.examples(1, "test")[:30] + data.examples(3, "test")[:30]
    candidates = MovieCandidates.of(data.entities, {s: data.candidates(s) for s in ("dev", "test")})
    records = []
    for example in movie_tf_examples(exchanges, candidates, candidates.indices(), Parser(data.entities)):
        example.features.feature[CANDIDATE_RANGE].int64_list.value[:] = [0, 0]
        records.append(example.SerializeToString())
    from_examples = loaded.signatures["serving_examples"](examples=tf.constant(records))["indices"].numpy()
    history = [list(e.history) + [""] * (4 - len(e.history)) for e in exchanges]
    raw = loaded.signatures["serving_default"](memory=tf.constant(history),
                                               query=tf.constant([e.query for e in exchanges]))
    assert (raw["indices"].numpy() == from_examples).all()
    assert [r.decode() for r in raw["responses"].numpy()[:, 0]] == [candidates.texts[i] for i in from_examples[:, 0]]


def test_the_report_of_a_movie_run_has_its_hits_at_k_and_card(finished: dict) -> None:
    from pipeline.report import write_report

    page = write_report(finished["pipeline_root"].parent.parent, QUICK.products(), data=finished["corpus"])
    text = page.read_text()
    assert "task=movie-qa" in text and "<th>hits_at_10</th>" in text and 'alt="memn2n training curves"' in text
    assert text.count('alt="memn2n attention"') == 2  # a QA question, a question about a recommended movie
    assert "# Model card: memn2n" in (page.parent / "model_card_memn2n.md").read_text()
    # The command finds the run's corpus, its paper and the models it trained in the run's metadata.
    from click.testing import CliRunner

    from pipeline.cli import main

    page.unlink()
    result = CliRunner().invoke(main, ["report", str(finished["pipeline_root"].parent.parent)])
    assert result.exit_code == 0 and page.is_file(), result.output
    assert 'id="memn2n"' in page.read_text() and 'id="embeddings"' not in page.read_text()  # quick: MemN2N alone


def test_the_command_prints_the_pushed_product_model(finished: dict) -> None:
    printed = finished["printed"]
    assert printed["model"] == "memn2n" and printed["pushed_model"], printed
    assert printed["pushed_model"] == finished["summary"]["pushed_model"]


def test_steps_per_execution_never_exceed_the_batches_of_the_stream(tmp_path) -> None:
    from models.movie.records import write_tfrecords
    from models.movie.streamed import steps_per_execution

    path = str(tmp_path / "train.gz")
    write_tfrecords(path, [b"x"] * 5)
    config = StreamedConfig(batch_size=2, steps_per_execution=8)
    assert steps_per_execution([path], config) == 3  # 2 + 2 + 1
    assert steps_per_execution([path], StreamedConfig(batch_size=1, steps_per_execution=4)) == 4


def test_chat_and_rest_answer_a_question_a_recommendation_and_a_discussion_turn(finished: dict, served,
                                                                                tmp_path) -> None:
    """`dialog chat` on the pushed movie model: its KB is the model's own memory (no API calls, --kb refused), and
    each reply is what TF Serving's REST predict ranks first for the same history and message."""
    from click.testing import CliRunner

    from data.movie.reader import discover_movie_corpus
    from models.movie.examples import MovieData
    from models.serving.rest import predict
    from pipeline.cli import main

    data = MovieData(discover_movie_corpus(finished["corpus"]))
    said = [data.examples(task, "dev")[0].query for task in (1, 2, 4)]  # a question, a request, a comment
    model = finished["summary"]["pushed_model"]
    result = CliRunner().invoke(main, ["chat", "--model", model], input="\n".join(said) + "\n")
    assert result.exit_code == 0, result.output
    assert "KB its own long-term memory" in result.stderr and "KB sentences" in result.stderr
    replies = [line.removeprefix("you> ").removeprefix("bot> ").strip() for line in result.stdout.splitlines()
               if "bot>" in line]
    assert len(replies) == 3 and all(replies), result.stdout

    signature = served.signatures["serving_default"]
    memory: list[str] = []
    for message, reply in zip(said, replies, strict=True):
        predicted = predict(signature, {"instances": [{"memory": memory, "query": message}]})["predictions"][0]
        assert predicted["responses"][0] == reply
        memory += [message, reply]
    kb = tmp_path / "kb.txt"
    kb.write_text("1 r1 R_cuisine\titalian\n")
    refused = CliRunner().invoke(main, ["chat", "--model", model, "--kb", str(kb)], input="")
    assert refused.exit_code == 1 and "Movie Dialog model" in refused.output


def test_the_attention_of_a_question_is_over_the_kb_sentences_of_its_movie(finished: dict) -> None:
    """The memories the pushed model weighs for a QA question are the KB sentences holding its entity (its
    long-term memory), then nothing else: the question has no history; each weight belongs to one memory."""
    from data.movie.reader import discover_movie_corpus
    from models.movie.examples import MovieData
    from models.serving.explain import explain_movie_exchanges

    data = MovieData(discover_movie_corpus(finished["corpus"]))
    question = next(e for e in data.examples(1, "dev") if e.query.startswith("who directed "))
    movie = question.query.removeprefix("who directed ").removesuffix("?")
    (turn,) = explain_movie_exchanges(finished["summary"]["pushed_model"],
                                      [("q", question.history, question.query, ", ".join(question.answers))])
    memory = turn.example.memory
    assert memory and set(turn.example.memory_speaker) == {"kb"}
    key = movie.lower().replace(" ", "_")
    assert any(m.startswith(key + " directed_by") for m in memory), memory
    assert turn.attention.shape[1] == len(memory) and turn.attention.sum(axis=1) == pytest.approx(1.0, abs=1e-4)
