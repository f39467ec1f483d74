"""The `dialog` command line: generate, validate and stats, and their exit codes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import click
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from data.babi.generation import GenerationPlan, generate
from data.layout import dialog_file_name
from models.babi.presets import SEED_ENSEMBLE
from pipeline.cli import OutputPath, main


def test_generate_validate_stats(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "corpus"
    generated = runner.invoke(main, ["generate", "restaurant", "--out", str(out), "--seed", "5", "--dialogs", "3",
                                     "--tasks", "1,4", "--runner", "local"])
    assert generated.exit_code == 0, generated.output
    assert "8 dialog files (24 dialogs)" in generated.output

    validated = runner.invoke(main, ["validate", str(out)])
    assert validated.exit_code == 0, validated.output
    assert validated.output.startswith("OK:")

    stats = json.loads(runner.invoke(main, ["stats", str(out), "--json"]).output)
    assert stats["tasks"]["1"]["dialogs"] == {"dev": 3, "trn": 3, "tst": 3, "tst-OOV": 3}
    assert stats["tasks"]["4"]["api_outputs"] == 7.0
    assert stats["candidates"] == 4212
    assert "Table 1" in runner.invoke(main, ["stats", str(out)]).output

    path = out / dialog_file_name(4, "dev")
    path.write_text(path.read_text().replace("2 ", "3 ", 1))
    broken = runner.invoke(main, ["validate", str(out)])
    assert broken.exit_code == 1
    assert f"{path}:2: ID 3 where 2 was expected" in broken.output

    failed = runner.invoke(main, ["stats", str(out)])
    assert failed.exit_code == 1 and f"{path}:2:" in failed.output


def test_benchmark_refuses_an_out_that_is_its_own_csv(tmp_path: Path) -> None:
    """`--out t.csv` would have the Markdown table written over the CSV's name: refused before any work."""
    result = CliRunner().invoke(main, ["benchmark", "--data", str(tmp_path), "--out", str(tmp_path / "t.csv")])
    assert result.exit_code == 2 and "would be both the Markdown table and the CSV" in result.output
    assert list(tmp_path.iterdir()) == []


def test_bad_tasks_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "restaurant", "--out", str(tmp_path), "--tasks", "1,9"])
    assert result.exit_code == 2
    assert "restaurant tasks are 1-5" in result.output
    for command in (["benchmark", "--data", str(tmp_path), "--out", str(tmp_path / "t.md")], ["pipeline"]):
        result = CliRunner().invoke(main, [*command, "--tasks", "1,a"])  # one parser for every --tasks
        assert result.exit_code == 2 and "expected task numbers separated by commas, got '1,a'" in result.output


def test_task5_min_results_option_reaches_the_plan(tmp_path: Path, monkeypatch) -> None:
    import data.babi.generation as restaurant_generation

    plans = []
    monkeypatch.setattr(restaurant_generation, "generate", lambda plan, out, **kwargs: plans.append(plan) or [])
    runner = CliRunner()
    for extra in ([], ["--task5-min-results", "1"]):
        result = runner.invoke(main, ["generate", "restaurant", "--out", str(tmp_path), "--tasks", "5", *extra])
        assert result.exit_code == 0, result.output
    assert [plan.task5_min_results for plan in plans] == [GenerationPlan(seed=0).task5_min_results, 1]
    refused = runner.invoke(main, ["generate", "restaurant", "--out", str(tmp_path), "--task5-min-results", "0"])
    assert refused.exit_code == 2 and "--task5-min-results" in refused.output


def test_tasks_a_corpus_lacks_and_flags_that_would_be_ignored_are_usage_errors(tmp_path: Path) -> None:
    """Refused before any work, in one line each, rather than a run that writes nothing, a traceback deep in the
    pipeline, or a flag silently ignored."""
    corpus = tmp_path / "corpus"
    generate(GenerationPlan(seed=0, dialogs_per_split=2, tasks=(1,)), corpus, runner="local")
    runner = CliRunner()
    cases = [
        (["benchmark", "--data", str(corpus), "--out", str(tmp_path / "t.md"), "--tasks", "9"],
         "has no files of task 9 (it holds dialog bAbI (Bordes et al.) (task 1))"),
        (["benchmark", "--data", str(corpus), "--out", str(tmp_path / "t.md"), "--streamed"],
         "the tables of dialog bAbI (Bordes et al.) have no --streamed"),
        (["benchmark", "--data", str(corpus), "--out", str(tmp_path / "t.md"), "--records", str(tmp_path / "r")],
         "only the streamed rows (--streamed) are trained from records"),
        (["benchmark", "--data", str(corpus), "--out", str(tmp_path / "t.md"), "--streamed", "--records",
          str(corpus / "records")], f"{corpus / 'records'} is inside the corpus {corpus}"),
        (["benchmark", "--data", str(corpus), "--out", str(tmp_path / "t.md"), "--methods", "smn"],
         "unknown methods ['smn'] for dialog bAbI (Bordes et al.)"),
        (["pipeline", "--data", str(corpus), "--root", str(tmp_path / "root"), "--tasks", "1,9"],
         "has no files of task 9 (it holds dialog bAbI (Bordes et al.) (task 1))"),
        (["pipeline", "--data", str(tmp_path), "--root", str(tmp_path / "root")],
         "no task of any paper's layout"),
        (["train", "--data", str(corpus), "--task", "1", "--model", "smn", "--out", str(tmp_path / "m")],
         "'smn' is not a model of dialog bAbI (Bordes et al.); choose from memn2n, embeddings, template, hcn"),
        (["explain", "--model", str(tmp_path), "--data", str(corpus), "--task", "1", "--dialog", "0", "--turn", "1"],
         "--turn picks the turn of the heat map: give --png too"),
        (["explain", "--model", str(tmp_path), "--data", str(corpus), "--task", "1", "--dialog", "0", "--png",
          str(tmp_path / "a.png"), "--turn", "-1"], "-1 is not in the range x>=0"),
        (["validate", str(corpus), "--max-per-file", "-1"], "-1 is not in the range x>=0"),
    ]
    for arguments, message in cases:
        result = runner.invoke(main, arguments)
        assert result.exit_code == 2 and message in " ".join(result.output.split()), (arguments, result.output)
    assert not (tmp_path / "t.md").exists() and not (tmp_path / "root").exists() and not (tmp_path / "r").exists()


def test_train_then_evaluate(tmp_path: Path) -> None:
    runner = CliRunner()
    data, model = tmp_path / "corpus", tmp_path / "model"
    assert runner.invoke(main, ["generate", "restaurant", "--out", str(data), "--dialogs", "4", "--tasks", "1",
                                "--runner", "local"]).exit_code == 0
    victim = tmp_path / "victim"  # a link planted under a staging leftover's name made train empty its target
    (victim / "sub").mkdir(parents=True)
    (victim / "a.txt").write_text("a")
    (victim / "sub" / "b.txt").write_text("b")
    (tmp_path / ".model.tmp-deadbeef").symlink_to(victim, target_is_directory=True)
    trained = runner.invoke(main, ["train", "--data", str(data), "--task", "1", "--match-type", "--epochs", "2",
                                   "--embedding-dim", "8", "--per-occurrence-gradient", "--out", str(model)])
    assert trained.exit_code == 0, trained.output
    assert (victim / "a.txt").read_text() == "a" and (victim / "sub" / "b.txt").read_text() == "b"
    assert not (tmp_path / ".model.tmp-deadbeef").is_symlink()
    summary = json.loads(trained.stdout)  # stdout is the JSON alone: Keras' epoch lines go to stderr
    assert "Epoch 1/2" in trained.stderr
    assert summary["config"]["match_type"] and summary["config"]["hops"] == 1  # Table 9, task 1
    assert summary["config"]["per_occurrence_gradient"]
    assert summary["config"]["embedding_dim"] == 8 and summary["best_epoch"] in (1, 2)

    split = data / dialog_file_name(1, "tst-OOV")
    before = split.read_bytes()
    refused = runner.invoke(main, ["evaluate", "--model", str(model), "--data", str(data), "--task", "1",
                                   "--split", "tst-OOV", "--report", str(split)])  # the split evaluated
    assert refused.exit_code == 2 and "is a file inside" in refused.output and "which this command reads" in " ".join(
        refused.output.split())
    assert split.read_bytes() == before

    report = tmp_path / "mistakes.jsonl"
    evaluated = runner.invoke(main, ["evaluate", "--model", str(model), "--data", str(data), "--task", "1",
                                     "--split", "tst-OOV", "--report", str(report)])
    assert evaluated.exit_code == 0, evaluated.output
    result = json.loads(evaluated.output)
    assert set(result) == {"per_response_accuracy", "per_dialog_accuracy", "hits_at_10", "turns", "dialogs",
                           "answers_outside_candidates"}
    assert result["hits_at_10"] >= result["per_response_accuracy"]
    assert result["dialogs"] == 4 and result["answers_outside_candidates"] == 0
    mistakes = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(mistakes) == round(result["turns"] * (1 - result["per_response_accuracy"] / 100))

    png = tmp_path / "figures" / "attention.png"  # a folder that does not exist yet is created
    explained = runner.invoke(main, ["explain", "--model", str(model), "--data", str(data), "--task", "1",
                                     "--dialog", "2", "--png", str(png)])
    assert explained.exit_code == 0, explained.output
    assert "Bot turn 0 of babi-1/tst/2" in explained.output and "Hop #1" in explained.output
    assert explained.output.count("Predicted answer:") == explained.output.count("Bot turn ")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    no_dialog = runner.invoke(main, ["explain", "--model", str(model), "--data", str(data), "--task", "1",
                                     "--dialog", "99"])
    assert no_dialog.exit_code == 1 and "has no dialog 99" in no_dialog.output
    no_turn = runner.invoke(main, ["explain", "--model", str(model), "--data", str(data), "--task", "1",
                                   "--dialog", "0", "--png", str(png), "--turn", "50"])
    assert no_turn.exit_code == 1 and "has no bot turn 50" in no_turn.output

    # A restaurant model on the banking corpus answers nothing right, and the command says why.
    banking = tmp_path / "banking"
    assert runner.invoke(main, ["generate", "banking", "--out", str(banking), "--dialogs", "1", "--dev-dialogs", "1",
                                "--test-dialogs", "1"]).exit_code == 0
    foreign = runner.invoke(main, ["evaluate", "--model", str(model), "--data", str(banking), "--task", "7",
                                   "--split", "tst-OOT"])  # every split a corpus has: banking's out-of-template
    assert foreign.exit_code == 0 and "gold answers are not among the model's" in foreign.output
    assert json.loads(foreign.stdout)["answers_outside_candidates"] == json.loads(foreign.stdout)["turns"] > 0
    no_split = runner.invoke(main, ["evaluate", "--model", str(model), "--data", str(data), "--task", "1",
                                    "--split", "tst-OOT"])
    assert no_split.exit_code == 1 and "tst-OOT" in no_split.output and "Traceback" not in no_split.output

    missing = runner.invoke(main, ["evaluate", "--model", str(data), "--data", str(data), "--task", "1"])
    assert missing.exit_code == 1 and "no saved_model.pb" in missing.output
    wrong_task = runner.invoke(main, ["train", "--data", str(data), "--task", "3", "--out", str(model)])
    assert wrong_task.exit_code == 2 and "no files of task 3" in wrong_task.output


def test_train_model_hcn_is_the_template_method_with_hcns_lstm_and_mask(tmp_path: Path, monkeypatch) -> None:
    """Task 6's product model from the command line: the template ranker's method, given HCN's config (the same
    one the pipeline builds for task 6); training it is tested in tests/models/babi/template/test_hcn.py."""
    from models import methods

    data = tmp_path / "corpus"
    assert CliRunner().invoke(main, ["generate", "restaurant", "--out", str(data), "--dialogs", "1", "--tasks", "1",
                                     "--runner", "local"]).exit_code == 0
    asked = {}

    def fit(self, task, out, settings):
        asked.update(method=self.name, config=settings.config)
        return methods.Fitted(None, "", {"best_epoch": 1})

    monkeypatch.setattr(methods.Registered, "fit", fit)
    result = CliRunner().invoke(main, ["train", "--data", str(data), "--task", "1", "--model", "hcn", "--out",
                                       str(tmp_path / "model")])
    assert result.exit_code == 0, result.output
    assert asked["method"] == "template_memn2n" and asked["config"].encoder == "lstm" and asked["config"].action_mask
    assert asked["config"].ensemble == SEED_ENSEMBLE
    assert asked["config"].hops == 1  # Table 9's task-1 row, as for --model template


def test_framework_start_up_noise_is_hidden_unless_verbose(tmp_path: Path) -> None:
    import subprocess
    import sys

    repository = Path(__file__).resolve().parents[1]
    data = tmp_path / "corpus"
    assert CliRunner().invoke(main, ["generate", "restaurant", "--out", str(data), "--dialogs", "2", "--tasks", "1",
                                     "--runner", "local"]).exit_code == 0
    noise = ("oneDNN", "cuda", "TensorRT", "Deprecat")
    # Both runs at once (each its own model directory): the start-up they measure is most of their time.
    children = {tuple(verbose): subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *verbose, "train", "--data", str(data), "--task", "1", "--epochs", "1",
         "--embedding-dim", "8", "--out", str(tmp_path / f"model{len(verbose)}")], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=repository, env={"PYTHONPATH": str(repository), "PATH": "/usr/bin:/bin"})
        for verbose in ([], ["--verbose"])}
    for verbose, child in children.items():
        stdout, stderr = child.communicate()
        assert child.returncode == 0, stderr[-2000:]
        assert json.loads(stdout.strip().splitlines()[-1])["best_epoch"] == 1
        shown = [word for word in noise if word in stderr]
        assert bool(shown) == bool(verbose), (verbose, shown, stderr[-2000:])


def test_benchmark_asks_each_paper_of_the_corpus_for_its_tables(tmp_path: Path, monkeypatch) -> None:
    """The paper is looked up from the corpus once: a banking corpus gets Tables 8-9 with the banking names of
    --methods as columns and --seeds; a corpus holding bAbI tasks too gets Table 2 beside (Tables 8-9 to
    OUT-banking.md), each in a worker per core unless --jobs says otherwise; a name or flag of no paper of the corpus
    is refused by name."""
    from data.babi.generation import GenerationPlan as RestaurantPlan
    from data.banking.generation import BankingPlan
    from data.banking.generation import generate as generate_banking
    from models.babi import reproduce as babi
    from models.banking import reproduce as banking
    from models.jobs import cores

    generate_banking(BankingPlan(seed=1, train_dialogs=1, dev_dialogs=1, test_dialogs=1), tmp_path)
    asked = {}
    monkeypatch.setattr(banking, "benchmark", lambda *args, jobs: asked.setdefault("banking", (*args, jobs)) and [])
    monkeypatch.setattr(babi, "benchmark", lambda data, out, chosen, *_: asked.setdefault("babi", chosen) and [])
    result = CliRunner().invoke(main, ["benchmark", "--data", str(tmp_path), "--out", str(tmp_path / "t.md"),
                                       "--methods", "state_ranker-no_history", "--seeds", "2"])
    assert result.exit_code == 0, result.output
    assert asked.pop("banking")[-4:] == (2, ("state_ranker-no_history",), False, cores()) and not asked
    for refused, message in ((["--methods", "movie_ir"], "unknown methods ['movie_ir'] for banking"),
                             (["--folds", "2"], "the tables of banking self-play (Majumdar et al.) have no --folds")):
        result = CliRunner().invoke(main, ["benchmark", "--data", str(tmp_path), "--out", str(tmp_path / "t.md"),
                                           *refused])
        assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
    generate(RestaurantPlan(seed=0, dialogs_per_split=1, tasks=(1,)), tmp_path, runner="local")
    result = CliRunner().invoke(main, ["benchmark", "--data", str(tmp_path), "--out", str(tmp_path / "t.md"),
                                       "--methods", "tfidf"])
    assert result.exit_code == 0, result.output
    assert asked["banking"][-2] is True and asked["babi"] == ("tfidf",)  # Table 2 takes OUT, banking beside


def test_generate_refuses_a_corpus_the_disk_cannot_hold_or_a_large_one_not_asked_for(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """Estimated from a few rendered dialogs before anything is written: a mistyped --dialogs is one line."""
    import shutil
    from collections import namedtuple

    runner, out = CliRunner(), tmp_path / "big"
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 10**12))
    large = runner.invoke(main, ["generate", "restaurant", "--out", str(out), "--dialogs", "300000"])
    assert large.exit_code == 1 and "about 7.9 GB (more than 5 GB); pass --yes" in large.output
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 10**9))
    full = runner.invoke(main, ["generate", "restaurant", "--out", str(out), "--dialogs", "300000", "--yes"])
    assert full.exit_code == 1 and "about 7.9 GB" in full.output and "1.0 GB free" in full.output
    assert not out.exists()


def test_a_second_writer_of_a_corpus_is_refused_and_a_killed_runs_staging_cleared(tmp_path: Path) -> None:
    """Two generates into one directory would mix their seeds' files: the second gets one line naming the
    directory, and writes nothing. The lock held, the next generate removes the shard staging a killed run left."""
    from data.atomic import one_writer

    runner, out = CliRunner(), tmp_path / "corpus"
    commands = [["restaurant", "--dialogs", "2", "--tasks", "1"], ["banking", "--dialogs", "1", "--dev-dialogs", "1",
                "--test-dialogs", "1"], ["movies", "--scale", "tiny"]]
    with one_writer(out):
        for command in commands:
            result = runner.invoke(main, ["generate", command[0], "--out", str(out), *command[1:]])
            assert result.exit_code == 1, result.output
            assert f"{out} is being written by another process" in result.output
    assert list(out.iterdir()) == []
    (out / ".generate-killed").mkdir()
    (out / ".generate-killed" / "0000.000000000000").write_text("half a shard")
    assert runner.invoke(main, ["generate", *commands[0], "--out", str(out)]).exit_code == 0
    assert not (out / ".generate-killed").exists() and (out / "dialog-babi-task1-API-calls-trn.txt").exists()


def test_a_second_writer_of_a_model_a_table_or_a_pipeline_root_is_refused(tmp_path: Path) -> None:
    """A second train into one --out would clear the first one's staging; two benchmarks would overwrite each
    other's table; two pipelines on one root would share its metadata. Each second writer gets one line and
    touches nothing: the model directory the first one is replacing keeps the user's file."""
    from data.atomic import one_writer, one_writer_of

    runner, model, table, root = CliRunner(), tmp_path / "model", tmp_path / "t2.md", tmp_path / "root"
    corpus = tmp_path / "corpus"
    assert runner.invoke(main, ["generate", "restaurant", "--out", str(corpus), "--dialogs", "2", "--tasks", "1"]
                         ).exit_code == 0
    model.mkdir()
    (model / "notes.txt").write_text("mine")
    commands = {model: ["train", "--data", str(corpus), "--task", "1", "--out", str(model)],
                table: ["benchmark", "--data", str(corpus), "--methods", "rule_based", "--out", str(table)],
                root: ["pipeline", "--quick", "--data", str(corpus), "--root", str(root)]}
    for output, command in commands.items():
        with (one_writer if output == root else one_writer_of)(output):
            result = runner.invoke(main, command)
        assert result.exit_code == 1 and f"{output} is being written by another process" in result.output, (
            result.output)
    assert [p.name for p in model.iterdir()] == ["notes.txt"] and not table.exists()
    assert list(root.iterdir()) == []


def test_adding_tasks_keeps_the_kb_the_other_tasks_use_or_refuses(tmp_path: Path) -> None:
    runner, out = CliRunner(), tmp_path / "corpus"
    base = ["generate", "restaurant", "--out", str(out), "--dialogs", "2"]
    assert runner.invoke(main, [*base, "--tasks", "3", "--seed", "0"]).exit_code == 0
    kb = (out / "dialog-babi-kb-all.txt").read_bytes()
    other_seed = runner.invoke(main, [*base, "--tasks", "1", "--seed", "3"])
    assert other_seed.exit_code == 1 and "tasks 3 use its KB" in other_seed.output
    assert (out / "dialog-babi-kb-all.txt").read_bytes() == kb
    assert not (out / "dialog-babi-task1-API-calls-trn.txt").exists()
    assert runner.invoke(main, [*base, "--tasks", "1", "--seed", "0"]).exit_code == 0  # the same KB: added
    assert runner.invoke(main, [*base, "--tasks", "1,3", "--seed", "3"]).exit_code == 0  # every task again


def test_a_failure_part_way_through_regenerating_leaves_the_old_corpus_whole(tmp_path: Path, monkeypatch) -> None:
    """The disk filling after the dialog files and before the KB: the old corpus stays, every file, and the error
    is one line naming the file."""
    import errno

    from data.babi import generation

    runner, out = CliRunner(), tmp_path / "corpus"
    base = ["generate", "restaurant", "--out", str(out), "--dialogs", "2", "--tasks", "1,2"]
    assert runner.invoke(main, [*base, "--seed", "0"]).exit_code == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}

    def full(out: Path, seed: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out / "dialog-babi-kb-all.txt"))

    monkeypatch.setattr(generation, "_write_side_files", full)
    failed = runner.invoke(main, [*base, "--seed", "1"])
    assert failed.exit_code == 1 and "dialog-babi-kb-all.txt: No space left on device" in failed.output
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_an_output_under_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    """A parent that is a file failed deep inside the work with a traceback (the pipeline's metadata, the
    Trainer's export): now a usage error naming it, for every option a command writes to."""
    afile = tmp_path / "afile"
    afile.write_text("a user's file")
    corpus = tmp_path / "corpus"
    generate(GenerationPlan(seed=1, dialogs_per_split=2, tasks=(1,)), corpus, runner="local")
    runner = CliRunner()
    for command in (["generate", "restaurant", "--out", str(afile / "c")],
                    ["convert", "dstc2", "--src", str(tmp_path), "--out", str(afile / "c")],
                    ["train", "--data", str(corpus), "--task", "1", "--out", str(afile / "m")],
                    ["benchmark", "--data", str(corpus), "--out", str(afile / "t.md")],
                    ["pipeline", "--data", str(corpus), "--root", str(afile / "r")]):
        result = runner.invoke(main, command)
        assert result.exit_code == 2, (command, result.output)
        assert f"{afile} is a file, not a directory" in result.output, (command, result.output)
    assert afile.read_text() == "a user's file"


def test_beam_args_that_beam_would_drop_or_fail_on_are_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    for command in (["pipeline", "--quick", "--root", str(tmp_path / "r")],
                    ["generate", "restaurant", "--out", str(tmp_path / "g"), "--runner", "beam"]):
        dropped = runner.invoke(main, [*command, "--beam-arg=notanoption"])
        assert dropped.exit_code == 2 and "'notanoption' is not a Beam option" in dropped.output
        bogus = runner.invoke(main, [*command, "--beam-arg=--runner=Bogus"])
        assert bogus.exit_code == 2 and "Unexpected pipeline runner: Bogus" in bogus.output
    assert not (tmp_path / "r").exists() and not (tmp_path / "g").exists()


def test_a_full_disk_is_one_line_in_any_command(tmp_path: Path, monkeypatch) -> None:
    """At a model's export (TensorFlow's own error, or Python's) or a report's write: one line naming the error,
    not the frameworks' traceback (123 lines at the pipeline Trainer's export)."""
    import errno

    import tensorflow as tf

    from models.serving import evaluate as evaluation
    from models.serving import export

    runner, data = CliRunner(), tmp_path / "corpus"
    generate(GenerationPlan(seed=2, dialogs_per_split=3, tasks=(1,)), data, runner="local")
    train = ["train", "--data", str(data), "--task", "1", "--epochs", "1", "--embedding-dim", "8"]

    def full_tf(*args, **kwargs) -> None:
        raise tf.errors.ResourceExhaustedError(None, None, (  # as TensorFlow's saver words it (seen on a full tmpfs)
            "{{function_node __wrapped__SaveV2_dtypes_4_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
            "model/variables/variables.data: No space left on device [Op:SaveV2]"))

    monkeypatch.setattr(export, "replace_directory", full_tf)
    result = runner.invoke(main, [*train, "--out", str(tmp_path / "m1")])
    assert result.exit_code == 1 and result.output.strip().splitlines()[-1] == (
        "Error: model/variables/variables.data: No space left on device"), result.output
    monkeypatch.undo()
    assert runner.invoke(main, [*train, "--out", str(tmp_path / "m2")]).exit_code == 0

    def full_os(path, *args, **kwargs) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(evaluation, "write_text_atomic", full_os)
    report = tmp_path / "mistakes.jsonl"
    result = runner.invoke(main, ["evaluate", "--model", str(tmp_path / "m2"), "--data", str(data), "--task", "1",
                                  "--report", str(report)])
    assert result.exit_code == 1 and f"{report}: No space left on device" in result.output, result.output
    assert "Traceback" not in result.output and not report.exists()


@settings(max_examples=80, deadline=None, derandomize=True)
@given(kinds=st.lists(st.sampled_from(["directory", "file", "missing"]), min_size=1, max_size=5))
def test_an_output_path_is_refused_exactly_when_one_of_its_parents_is_a_file(kinds: list[str]) -> None:
    """Over paths whose parts are directories, files or missing: OutputPath refuses, naming the file, exactly when
    an existing parent is a file, and accepts the rest (which the command then creates)."""
    with tempfile.TemporaryDirectory() as scratch:
        path, under_file, exists = Path(scratch), None, True
        for depth, kind in enumerate(kinds):
            path = path / f"part{depth}"
            if exists and kind != "missing":  # nothing can be made below a file or a missing part
                path.mkdir() if kind == "directory" else path.write_text("x")
                under_file = path if kind == "file" and depth < len(kinds) - 1 else None
            exists = exists and kind == "directory"
        try:
            OutputPath().convert(str(path), None, None)
        except click.BadParameter as refused:
            assert under_file is not None and f"{under_file} is a file" in str(refused)
        else:
            assert under_file is None


def test_progress_bars_are_drawn_on_a_terminal_on_stderr_and_never_with_quiet(tmp_path: Path, monkeypatch) -> None:
    """As on a terminal (the test's stderr is not one, where no bar is drawn): generate draws its bar on stderr,
    stdout stays as it was, and ``dialog --quiet`` draws none."""
    import data.progress as progress

    monkeypatch.setattr(progress, "shown", lambda: not progress.is_quiet())
    runner = CliRunner()
    command = ["generate", "restaurant", "--dialogs", "50", "--tasks", "1", "--runner", "local", "--out"]
    drawn = runner.invoke(main, [*command, str(tmp_path / "a")])
    assert drawn.exit_code == 0 and "generating: 100%" in drawn.stderr and "dialog/s]" in drawn.stderr
    assert "generating" not in drawn.stdout
    for checker, words in (("validate", "validating: 100%"), ("stats", "counting: 100%")):
        checked = runner.invoke(main, [checker, str(tmp_path / "a")])
        assert checked.exit_code == 0 and words in checked.stderr and words not in checked.stdout, checked.stderr
    quiet = runner.invoke(main, ["--quiet", *command, str(tmp_path / "b")])
    assert quiet.exit_code == 0 and "generating" not in quiet.stderr and "dialog/s]" not in quiet.stderr

