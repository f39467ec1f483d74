"""The exported model as a server sees it: TF Serving's REST JSON, ordinary bad input, saved_model_cli, chat."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from click.testing import CliRunner

from data.babi.generation import GenerationPlan, generate
from data.corpus import KBFact
from data.kb_lookup import lookup
from data.layout import discover
from models.babi.template.config import TemplateConfig
from models.examples import pad_batch, split_examples
from models.gfile import GFileSystem
from models.serving.chat import ChatSession
from models.serving.export import infer_speakers
from models.serving.ranker import ModelError, SavedModelRanker, resolve_model_dir
from models.serving.rest import RequestError, predict
from models.training import MemN2NConfig, train
from pipeline.cli import main

REQUEST = {"instances": [{"memory": ["hi", "hello what can i help you with today"],
                          "query": "can you book a table in rome with italian food"}]}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=4, dialogs_per_split=8, tasks=(3,)), out, runner="local")
    return out


@pytest.fixture(scope="module")
def model_dir(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("model") / "model"
    train(discover(corpus)[3], MemN2NConfig(hops=1, embedding_dim=8, epochs=1, max_memory=6), out=out)
    return out


@pytest.fixture(scope="module")
def serve(model_dir: Path):
    return tf.saved_model.load(str(model_dir)).signatures["serving_default"]


def test_the_documented_rest_request(serve) -> None:
    answer = predict(serve, json.loads(json.dumps(REQUEST)))
    (row,) = answer["predictions"]
    assert len(row["responses"]) == len(row["scores"]) == len(row["indices"]) == 10
    assert row["scores"] == sorted(row["scores"], reverse=True)
    assert np.asarray(row["attention"]).shape[-1] == 6  # per hop, one weight per memory slot


def test_speakers_inferred_from_the_layout_match_the_dialogs(corpus: Path, model_dir: Path, serve) -> None:
    examples = split_examples(discover(corpus)[3], "dev")  # KB results open each dialog
    memory, speaker, query = pad_batch(examples)
    np.testing.assert_array_equal(infer_speakers(tf.constant(memory, tf.string)).numpy().astype(str),
                                  speaker.astype(str))
    default = serve(memory=tf.constant(memory, tf.string), query=tf.constant(query, tf.string))
    explicit = SavedModelRanker(model_dir).outputs(examples)
    np.testing.assert_array_equal(default["indices"].numpy(), explicit["indices"])


def test_an_empty_utterance_inside_the_history_keeps_its_place() -> None:
    speakers = infer_speakers(tf.constant([["", "welcome", "r1 R_phone p", "i want food", "ok", ""]]))
    assert speakers.numpy().astype(str).tolist() == [["user", "bot", "user", "user", "bot", ""]]


@pytest.mark.parametrize("instance", [
    {"memory": [], "query": "hi"},                                                     # empty history
    {"memory": [f"utterance {i}" for i in range(40)], "query": "hi"},                  # longer than memory (6)
    {"memory": ["zzyzx qwfp", "blorft"], "query": "snarfle wibble"},                   # words never seen
    {"memory": ["hi", "hello what can i help you with today"], "query": "<SILENCE>"},  # the user said nothing
    {"memory": ["hi"], "query": ""},                                                   # an empty query
])
def test_ordinary_bad_input_gets_an_answer(serve, instance: dict) -> None:
    (row,) = predict(serve, {"instances": [instance]})["predictions"]
    assert len(row["responses"]) == 10 and all(np.isfinite(row["scores"]))


def test_the_most_recent_memories_are_kept(serve) -> None:
    recent = ["hi", "hello what can i help you with today"]
    long = predict(serve, {"instances": [{"memory": [f"old {i}" for i in range(30)] + recent[:0] + [
        "a", "b", "c", "d", *recent], "query": "<SILENCE>"}]})
    short = predict(serve, {"instances": [{"memory": ["a", "b", "c", "d", *recent], "query": "<SILENCE>"}]})
    assert long["predictions"][0]["indices"] == short["predictions"][0]["indices"]


@pytest.mark.parametrize(("request_body", "message"), [
    ([{"query": "hi"}], "JSON object"),
    ({"inputs": {"query": ["hi"]}}, "JSON object"),
    ({"instances": []}, "empty"),
    ({"instances": [{"memory": ["hi"]}]}, r"instances\[0\].query must be a string"),
    ({"instances": [{"memory": "hi there", "query": "hi"}]}, r"instances\[0\].memory must be a list of strings"),
    ({"instances": [{"memory": [1, 2], "query": "hi"}]}, r"instances\[0\].memory"),
    ({"instances": [{"query": 3}]}, "got int"),
    ({"instances": [{"query": "hi", "speaker": []}]}, "unknown fields"),
    ({"instances": [{"memory": ["a"], "query": "hi"}, {"memory": [], "query": "hi"}]}, "different lengths"),
    (json.loads('{"instances": [{"query": "hi \\ud800"}]}'), r"instances\[0\].query is not valid Unicode"),
    (json.loads('{"instances": [{"memory": ["ok", "\\udfff"], "query": "hi"}]}'),
     r"instances\[0\].memory\[1\] is not valid Unicode"),
    ({"instances": [{"query": "hi"}], "signature_name": "serving_examples"}, "answered by 'serving_default' only"),
    ({"instances": [{"query": "hi"}], "inputs": {}}, r"request has unknown fields \['inputs'\]"),
    ({"instances": [{"query": "hi"}] * 1025}, "holds 1,025; at most 1,024 a request"),
])
def test_malformed_requests_get_a_clear_error(serve, request_body, message: str) -> None:
    with pytest.raises(RequestError, match=message):
        predict(serve, request_body)


def test_the_signature_refuses_the_wrong_type_or_shape(serve) -> None:
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError), match="string"):
        serve(memory=tf.constant([[1, 2]]), query=tf.constant(["hi"]))
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        serve(memory=tf.constant(["hi"]), query=tf.constant(["hi"]))  # memory must be [batch, history]


def test_saved_model_cli_shows_and_runs_it(model_dir: Path) -> None:
    cli = Path(sys.executable).parent / "saved_model_cli"
    shown = subprocess.run([str(cli), "show", "--dir", str(model_dir), "--all"], capture_output=True, text=True,
                           check=True).stdout
    for name in ("serving_default", "serving_speakers", "serving_examples", "responses", "attention"):
        assert name in shown
    ran = subprocess.run([str(cli), "run", "--dir", str(model_dir), "--tag_set", "serve", "--signature_def",
                          "serving_default", "--input_exprs",
                          "memory=[['hi', 'hello what can i help you with today']];query=['<SILENCE>']"],
                         capture_output=True, text=True, check=True).stdout
    assert "responses" in ran and "scores" in ran


def test_kb_lookup_answers_an_api_call() -> None:
    facts = [KBFact("r1", "R_cuisine", "italian"), KBFact("r1", "R_location", "rome"),
             KBFact("r2", "R_cuisine", "french"), KBFact("r2", "R_location", "rome")]
    assert lookup(facts, "api_call italian rome") == ["r1 R_cuisine italian", "r1 R_location rome"]
    assert lookup(facts, "api_call dontcare rome") == [f.as_result_text() for f in facts]
    assert lookup(facts, "api_call thai rome") == ["api_call no result"]


def test_chat_keeps_the_history_and_runs_api_calls(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = [KBFact("r1", "R_cuisine", "italian"), KBFact("r1", "R_rating", "7")]
    session = ChatSession(model_dir, facts)
    first = session.respond("hi")
    assert [kind for kind, _ in first][0] == "bot" and session.memory[0] == "hi"
    replies = iter(["api_call italian dontcare", "what do you think of this option: r1"])
    monkeypatch.setattr(session, "_reply", lambda query: next(replies))
    lines = session.respond("")
    assert lines == [("bot", "api_call italian dontcare"), ("kb", "r1 R_cuisine italian"),
                     ("kb", "r1 R_rating 7"), ("bot", "what do you think of this option: r1")]
    assert session.memory[-6:] == ["<SILENCE>", "api_call italian dontcare", "r1 R_cuisine italian",
                                   "r1 R_rating 7", "<SILENCE>", "what do you think of this option: r1"]


def test_resolve_model_dir_picks_the_newest_version(model_dir: Path, tmp_path: Path) -> None:
    for version in ("7", "12"):
        (tmp_path / version).symlink_to(model_dir, target_is_directory=True)
    (tmp_path / ".staging-13").mkdir()
    assert resolve_model_dir(tmp_path) == tmp_path / "12"
    with pytest.raises(FileNotFoundError, match="numbered model versions"):
        resolve_model_dir(tmp_path / ".staging-13")


def test_chat_refuses_a_line_that_is_not_text_and_keeps_the_conversation(model_dir: Path) -> None:
    session = ChatSession(model_dir)
    session.respond("hi")
    kept = list(session.memory)
    for line in ("caf\udce9", "a\0b"):  # undecodable bytes (surrogateescape) and a NUL byte
        with pytest.raises(ValueError, match="not valid text"):
            session.respond(line)
        assert session.memory == kept


def test_chat_names_a_malformed_kb_by_file_and_line(model_dir: Path, tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text("1 r1 R_cuisine\titalian\nr2 R_cuisine thai\n")
    result = CliRunner().invoke(main, ["chat", "--model", str(model_dir), "--kb", str(kb)], input="")
    assert result.exit_code == 1 and f"{kb}:2:" in result.output and "Traceback" not in result.output


def test_a_damaged_or_foreign_model_is_one_line_naming_it(model_dir: Path, corpus: Path, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "saved_model.pb").write_bytes(b"not a protocol buffer")
    truncated = tmp_path / "truncated"
    shutil.copytree(model_dir, truncated)
    data = next((truncated / "variables").glob("variables.data-*"))
    data.write_bytes(data.read_bytes()[:10])
    foreign = tmp_path / "foreign"
    module = tf.Module()
    module.double = tf.function(lambda x: 2 * x, input_signature=[tf.TensorSpec([], tf.float32)])
    tf.saved_model.save(module, str(foreign), signatures={"serving_default": module.double.get_concrete_function()})
    for directory, message in ((garbage, "not a readable SavedModel"), (truncated, "not a readable SavedModel"),
                               (foreign, "not one dialog train wrote (no serving_speakers, serving_examples")):
        with pytest.raises(ModelError, match=re.escape(f"{directory}: ") + ".*" + re.escape(message)):
            SavedModelRanker(directory)
        result = CliRunner().invoke(main, ["evaluate", "--model", str(directory), "--data", str(corpus), "--task",
                                           "3", "--split", "dev"])
        assert result.exit_code == 1 and result.output.startswith(f"Error: {directory}: ") and \
            len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(("damage", "message"), [
    (lambda spec: spec.write_bytes(spec.read_bytes()[:spec.stat().st_size // 2]), "not valid JSON ("),
    (lambda spec: spec.unlink(), "missing (every model dialog train writes has it)"),
    (lambda spec: spec.write_text("[1, 2]"), "not a JSON object"),
    (lambda spec: spec.write_bytes(b"\xff\xfe{}"), "not UTF-8 text"),
    (lambda spec: spec.write_text('{"candidates": [1]}'), '"candidates" is not a list of strings'),
    (lambda spec: (spec.unlink(), os.mkfifo(spec)), "is a named pipe (FIFO), not a regular file"),  # blocked for ever
    (lambda spec: (spec.unlink(), spec.symlink_to("/dev/zero")), "is a character device"),
], ids=["truncated", "missing", "not-an-object", "not-utf8", "wrong-type", "fifo", "dev-zero"])
def test_a_damaged_or_missing_feature_spec_is_one_line_naming_it_before_any_work(
        model_dir: Path, corpus: Path, tmp_path: Path, damage, message: str) -> None:
    """evaluate computed its metrics, then ended in a JSONDecodeError naming no file; a missing spec went unseen.
    Every command that loads a model now names the asset, and what to do, before it ranks anything."""
    damaged = tmp_path / "model"
    shutil.copytree(model_dir, damaged)
    spec = damaged / "assets" / "feature_spec.json"
    damage(spec)
    with pytest.raises(ModelError, match=re.escape(f"{spec}: {message}")):
        SavedModelRanker(damaged)
    for command in (["evaluate", "--model", str(damaged), "--data", str(corpus), "--task", "3", "--split", "dev"],
                    ["explain", "--model", str(damaged), "--data", str(corpus), "--task", "3", "--dialog", "0"],
                    ["chat", "--model", str(damaged)]):
        result = CliRunner().invoke(main, command, input="")
        assert result.exit_code == 1, (command, result.output)
        assert result.output.startswith(f"Error: {spec}: {message}") and "train it again" in result.output, \
            (command, result.output)
        assert len(result.output.strip().splitlines()) == 1, (command, result.output)


def test_chat_on_the_terminal_survives_invalid_utf8(model_dir: Path) -> None:
    result = CliRunner().invoke(main, ["chat", "--model", str(model_dir)], input=b"hi\n\xff\xfe bad\nhello\n")
    assert result.exit_code == 0, result.output
    before, refused, after = result.output.partition("that line is not valid text")
    assert refused and "bot> " in before and "bot> " in after, result.output  # answered before and after it


@pytest.fixture(scope="module")
def template_ranker(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    from models.babi.template.ranker import TemplateRanker
    from models.examples import TaskData

    out = tmp_path_factory.mktemp("template") / "model"
    ranker, _ = TemplateRanker.fit(TaskData.load(discover(corpus)[3]),
                                   TemplateConfig(hops=1, embedding_dim=16, epochs=3), out, fill_epochs=3)
    return ranker, out


def test_the_template_model_serves_complete_responses_over_rest_and_saved_model_cli(template_ranker) -> None:
    ranker, out = template_ranker
    serve = tf.saved_model.load(str(out)).signatures["serving_default"]
    memory = ["hi", "hello what can i help you with today", "<SILENCE>", "api_call italian rome two cheap",
              "resto_rome_cheap_italian_1stars R_rating 1", "resto_rome_cheap_italian_8stars R_rating 8"]
    request = {"instances": [{"memory": memory, "query": "<SILENCE>"}]}
    (row,) = predict(serve, request)["predictions"]
    assert len(row["responses"]) == 10 and "<" not in " ".join(row["responses"])  # entities filled, no slot left
    assert row["template"] == ranker.lexicon.delexicalise(row["responses"][0])
    assert np.asarray(row["attention"]).shape[-1] == 6  # the raw memory's slots, dropped KB lines included
    cli = Path(sys.executable).parent / "saved_model_cli"
    ran = subprocess.run([str(cli), "run", "--dir", str(out), "--tag_set", "serve", "--signature_def",
                          "serving_default", "--input_exprs",
                          "memory=[['hi', 'hello what can i help you with today']];query=['<SILENCE>']"],
                         capture_output=True, text=True, check=True).stdout
    assert "responses" in ran and "template" in ran


def test_chat_and_explain_work_on_the_template_model(template_ranker, corpus: Path) -> None:
    from data.babi_format import read_kb
    from models.serving.explain import explain_turns, format_turn

    _, out = template_ranker
    session = ChatSession(out, read_kb(corpus / "dialog-babi-kb-all.txt").facts)
    session.respond("hi")
    produced = session.respond("may i have a table in rome with italian food for two in a cheap price range")
    assert all("<" not in line for _, line in produced)
    examples = split_examples(discover(corpus)[3], "dev")[:6]
    turns = explain_turns(SavedModelRanker(out), examples)
    offer = next(t for t in turns if t.template and "<name>" in t.template)
    assert offer.entities and offer.entities[0][0] == "name" and offer.entities[0][1] in offer.predicted
    text = format_turn(offer)
    assert "Template:" in text and f"name={offer.entities[0][1]}" in text
    assert all(t.attention.shape[1] == len(t.example.memory) for t in turns)


class ObjectStore(GFileSystem):
    """gs://'s semantics on TensorFlow's ram://: a directory is a name prefix, renamed object by object (ram://
    itself renames only the directory's own entry)."""

    def rename(self, source: str, target: str) -> None:
        if not tf.io.gfile.isdir(source):
            return super().rename(source, target)
        for directory, _, files in tf.io.gfile.walk(source):
            for name in files:
                moved = target + f"{directory}/{name}"[len(source):]
                tf.io.gfile.makedirs(moved.rsplit("/", 1)[0])
                tf.io.gfile.rename(f"{directory}/{name}", moved, overwrite=True)
        tf.io.gfile.rmtree(source)


def test_a_model_exports_to_a_remote_file_system(template_ranker, corpus: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Export goes through tf.io.gfile: on a non-local scheme the model is written, replaced and read back (with
    ``pathlib`` in the way, "ram://x" would become the local "ram:/x")."""
    import uuid

    from models.serving import export as export_module
    from models.serving.export import export

    monkeypatch.setattr(export_module, "GFILE", ObjectStore())
    ranker, _ = template_ranker
    target = f"ram://export-{uuid.uuid4().hex}/serving/model"
    export(ranker.module, target)
    export(ranker.module, target)  # replaced whole
    assert sorted(tf.io.gfile.listdir(target.rsplit("/", 1)[0])) == ["model"]
    examples = split_examples(discover(corpus)[3], "tst")[:20]
    loaded = tf.saved_model.load(target).signatures["serving_speakers"]
    memory, speaker, query = pad_batch(examples)
    responses = loaded(memory=tf.constant(memory), memory_speaker=tf.constant(speaker), query=tf.constant(query))
    assert [[r.decode() for r in row] for row in responses["responses"].numpy()] == ranker.rank(examples)


def test_a_heat_map_is_scaled_so_the_attended_lines_stand_out() -> None:
    """Thirty memories of a few hundredths each were drawn almost white on a 0-1 scale."""
    import io

    import matplotlib.image
    import numpy as np

    from models.examples import TurnExample
    from models.serving.explain import TurnAttention, heat_map_png

    memory = tuple(f"line {i}" for i in range(30))
    attention = np.full((1, 30), 0.5 / 29)
    attention[0, 7] = 0.5  # the line the hop attends to
    example = TurnExample(dialog_id="babi-1/dev/0", task="1", split="dev", turn=0, memory=memory,
                          memory_speaker=("user",) * 30, query="hi", answer="hello")
    pixels = matplotlib.image.imread(io.BytesIO(heat_map_png(TurnAttention(example, "hello", attention))))
    height, width = pixels.shape[:2]
    inside = pixels[height // 5: 4 * height // 5, width // 2: 4 * width // 5, :3]  # the map, no text, no colour bar
    assert inside.min(axis=-1).min() < 0.2  # the attended line is deep blue (only mid-blue on a 0-1 scale)


def test_a_spec_of_many_megabytes_is_read(tmp_path: Path) -> None:
    """A paper-scale Movie Dialog model's spec is one JSON line of about 5 MB (117k words, 85k candidates): longer
    than the corpus files' line bound, it was refused as damaged and `dialog chat` could not open the model."""
    from models.serving.ranker import read_spec, spec_path

    (tmp_path / "assets").mkdir()
    words = [f"word{i}" for i in range(400_000)]
    Path(spec_path(tmp_path)).write_text(json.dumps({"vocabulary": words, "candidates": ["a", "b"]}))
    assert Path(spec_path(tmp_path)).stat().st_size > 4 * 2**20
    assert read_spec(tmp_path)["vocabulary"][-1] == "word399999"
