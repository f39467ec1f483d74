"""The whole `dialog` pipeline on a tiny generated corpus: every artifact, resuming from cache, bad data stopped."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate
from models.babi.presets import SEED_ENSEMBLE
from models.babi.profiles import Profile
from models.babi.template.config import TemplateConfig
from models.serving.rest import predict
from models.training import EmbeddingsConfig, MemN2NConfig
from pipeline.local_runner import run
from pipeline.pipeline import create_pipeline
from pipeline.summary import raw_slice_metrics, run_summary

# Two epochs of small models: the test checks the plumbing (the best epoch kept), the benchmarks check accuracy.
TINY = Profile(name="tiny",
               template=TemplateConfig(hops=1, embedding_dim=8, epochs=2, fill_epochs=2),
               memn2n=MemN2NConfig(match_type=True, hops=1, embedding_dim=8, epochs=2),
               embeddings=EmbeddingsConfig(embedding_dim=8, negatives=10, epochs=2),
               # No model reaches 101%: the embeddings are refused by the floor.
               min_accuracy={"template": 0.0, "memn2n": 0.0, "embeddings": 1.01})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=6, dialogs_per_split=3), out, runner="local")
    return out


@pytest.fixture(scope="module")
def finished(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from tfx.utils import dependency_utils

    def leaked(*_: object) -> str:  # what TFX does when the Beam options do not say how code gets to the workers
        raise AssertionError("TFX built its ephemeral package: a copy of TFX left in a new temporary directory")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dependency_utils, "build_ephemeral_package", leaked)
        located = run(root=tmp_path_factory.mktemp("run"), data=corpus, profile=TINY)
    return {**located, "summary": run_summary(located["metadata"], TINY.products()), "corpus": corpus}


def _only(pattern: str, root: Path) -> Path:
    found = sorted(root.glob(pattern))
    assert len(found) == 1, (pattern, found)
    return found[0]


def test_every_artifact_is_written(finished: dict) -> None:
    root = finished["pipeline_root"]
    examples = _only("DialogExampleGen/examples/*", root)
    for split in ("train", "eval", "test"):
        assert list((examples / f"Split-{split}").glob("*.gz"))
        assert (_only("StatisticsGen/statistics/*", root) / f"Split-{split}" / "FeatureStats.pb").is_file()
        assert (_only("ExampleValidator/anomalies/*", root) / f"Split-{split}" / "SchemaDiff.pb").is_file()
    resources = json.loads((examples / "corpus" / "resources.json").read_text())
    assert resources["tasks"] == [1, 2, 3, 4, 5] and len(resources["candidates"]) == 4212
    assert (_only("SchemaGen/schema/*", root) / "schema.pbtxt").is_file()
    assert (_only("CuratedSchema/schema/*", root) / "schema.pbtxt").is_file()

    report = json.loads((_only("DialogDataGate/report/*", root) / "data_report.json").read_text())
    assert report["anomalies"] == {"train": [], "eval": [], "test": []}
    assert report["answers_not_in_candidates"] == {"train": 0, "eval": 0, "test": 0}
    drift = report["vocabulary_drift"]
    assert drift["tst-OOV"]["unseen_word_rate"] > drift["tst"]["unseen_word_rate"]  # the second KB's entities

    for name in ("Template", "MemN2N", "Embeddings"):
        model = _only(f"{name}Trainer/model/*", root)
        assert (model / "Format-Serving" / "saved_model.pb").is_file()
        assert (model / "Format-Serving" / "assets" / "feature_spec.json").is_file()
        run_dir = _only(f"{name}Trainer/model_run/*", root)
        trained = json.loads((run_dir / "training_summary.json").read_text())
        trained = trained.get("template_model", trained)  # the template ranker: its template model's epochs
        accuracies = [epoch["dev_per_response_accuracy"] for epoch in trained["history"]]
        assert len(accuracies) == 2 and trained["best_epoch"] == 1 + accuracies.index(max(accuracies))
        assert list(run_dir.rglob("events.out.tfevents.*"))  # TensorBoard logs
        assert _only(f"{name}Evaluator/evaluation/*", root).is_dir()


def test_the_evaluation_has_the_slices(finished: dict) -> None:
    slices = finished["summary"]["slices"]
    for name in ["overall", "split=dev", "split=tst", "split=tst-OOV",
                 *(f"task=babi-{t}" for t in range(1, 6)), "split=tst-OOV,task=babi-3"]:
        row = slices[name]
        assert 0 <= row["per_dialog_accuracy"] <= row["per_response_accuracy"] <= row["hits_at_10"] <= 100, name
    assert not [name for name in slices if "challenge=" in name]  # no challenge set: no slice repeats another
    assert slices["overall"]["turns"] == sum(slices[f"task=babi-{t}"]["turns"] for t in range(1, 6))


@pytest.mark.parametrize("model", ["template", "memn2n"])
def test_the_blessed_model_is_pushed_whole_and_serves(finished: dict, model: str) -> None:
    summary = finished["summary"]["models"][model]
    assert summary["blessed"]
    pushed = Path(summary["pushed_model"])
    assert pushed.parent == finished["serving_model_dir"] / model and re.fullmatch(r"\d+", pushed.name)
    assert (pushed / "saved_model.pb").is_file() and (pushed / "variables").is_dir()
    assert not [p for p in pushed.parent.iterdir() if p.name.startswith(".")]  # no staging left behind
    import tensorflow as tf

    serve = tf.saved_model.load(str(pushed)).signatures["serving_default"]
    answer = predict(serve, {"instances": [{"memory": ["hi", "hello what can i help you with today"],
                                            "query": "i'd like to book a table with italian food"}]})
    assert len(answer["predictions"][0]["responses"]) == 10


def test_the_product_model_is_the_template_ranker(finished: dict) -> None:
    summary = finished["summary"]
    assert summary["model"] == "template" and summary["pushed_model"] == summary["models"]["template"]["pushed_model"]
    assert summary["slices"] == summary["models"]["template"]["slices"]


def test_the_evaluators_extractors_change_no_metric(finished: dict, tmp_path: Path) -> None:
    """The pipeline's Evaluators run components.dialog_extractors; TFX's Evaluator with TFMA's default extractors,
    on the same model and examples, gives the same metrics on every slice."""
    from tfx.components.evaluator.executor import Executor
    from tfx.types import artifact_utils, standard_artifacts

    root = finished["pipeline_root"]
    first = min((root / "MemN2NEvaluator/evaluation").iterdir(), key=lambda path: int(path.name))
    node = {n.id: n for n in create_pipeline(pipeline_root=str(root), data_root=str(finished["corpus"]),
                                             serving_model_dir="unused", profile=TINY).components}["MemN2NEvaluator"]
    assert node.exec_properties["module_path"] == "components.dialog_extractors"
    examples = standard_artifacts.Examples()
    examples.uri = str(_only("DialogExampleGen/examples/*", root))
    examples.split_names = artifact_utils.encode_split_names(["train", "eval", "test"])
    model = standard_artifacts.Model()
    model.uri = str(min((root / "MemN2NTrainer/model").iterdir(), key=lambda path: int(path.name)))
    evaluation, blessing = standard_artifacts.ModelEvaluation(), standard_artifacts.ModelBlessing()
    evaluation.uri, blessing.uri = str(tmp_path / "evaluation"), str(tmp_path / "blessing")
    (tmp_path / "evaluation").mkdir(), (tmp_path / "blessing").mkdir()
    properties = {key: node.exec_properties[key] for key in ("eval_config", "example_splits")}
    Executor().Do({"examples": [examples], "model": [model]}, {"evaluation": [evaluation], "blessing": [blessing]},
                  properties)
    custom, default = raw_slice_metrics(str(first)), raw_slice_metrics(str(tmp_path / "evaluation"))
    assert len(custom) > 10 and custom == default


def test_a_rerun_resumes_from_the_cache_and_a_worse_model_is_refused(finished: dict, corpus: Path) -> None:
    """The rerun changes only MemN2N's settings: every other component's output is reused from the cache, and the
    MemN2N that barely trains (more than one point below the blessed one on dev) is refused by the drop rule."""
    worse = replace(TINY, memn2n=replace(TINY.memn2n, epochs=1, learning_rate=1e-6))
    pushed = sorted(p.name for p in (finished["serving_model_dir"] / "memn2n").iterdir())
    again = run(root=finished["pipeline_root"].parent.parent, data=corpus, profile=worse)
    root = again["pipeline_root"]
    for component in ("DialogExampleGen/examples", "StatisticsGen/statistics", "TemplateTrainer/model",
                      "EmbeddingsTrainer/model"):
        assert len(list((root / component).iterdir())) == 1, component  # reused, not recomputed
    assert len(list((root / "MemN2NTrainer/model").iterdir())) == 2  # trained anew
    summary = run_summary(again["metadata"], TINY.products())
    assert summary["models"]["template"]["blessed"]
    memn2n = summary["models"]["memn2n"]
    assert not memn2n["blessed"] and memn2n["pushed_model"] is None, memn2n["slices"]["split=dev"]
    assert sorted(p.name for p in (finished["serving_model_dir"] / "memn2n").iterdir()) == pushed  # nothing new


def test_a_model_below_the_floor_is_not_pushed(finished: dict) -> None:
    embeddings = finished["summary"]["models"]["embeddings"]
    assert not embeddings["blessed"] and embeddings["pushed_model"] is None
    assert not (finished["serving_model_dir"] / "embeddings").exists() or not [
        p for p in (finished["serving_model_dir"] / "embeddings").iterdir()]


def test_bad_data_stops_the_run_before_training(corpus: Path, tmp_path: Path) -> None:
    broken = tmp_path / "corpus"
    shutil.copytree(corpus, broken)
    candidates = broken / "dialog-babi-candidates.txt"
    lines = candidates.read_text().splitlines(keepends=True)
    candidates.write_text("".join(line for line in lines if line != "1 hello what can i help you with today\n"))
    # Through the command line (DataGateError inside): the gate's report as the error, not a traceback.
    from click.testing import CliRunner

    from pipeline.cli import main

    refused = CliRunner().invoke(main, ["pipeline", "--quick", "--data", str(broken), "--root", str(tmp_path / "run")])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert re.search(r"Error: the corpus failed validation.*(not in the candidate set|answer_index)",
                     refused.output, re.S), refused.output
    root = tmp_path / "run" / "pipelines" / "dialog"
    assert (root / "ExampleValidator").is_dir()
    assert not [name for name in ("TemplateTrainer", "MemN2NTrainer", "EmbeddingsTrainer") if (root / name).exists()]


def test_a_corpus_without_test_files_runs_on_train_and_eval(corpus: Path, tmp_path: Path) -> None:
    """The public task 6 release has trn and dev only: no test split is read, the Evaluators report on eval."""
    from components.dialog_example_gen import corpus_splits
    from pipeline.pipeline import create_pipeline

    held_back = tmp_path / "corpus"
    shutil.copytree(corpus, held_back, ignore=shutil.ignore_patterns("*-tst*.txt"))
    assert corpus_splits(str(corpus)) == ("train", "eval", "test")
    assert corpus_splits(str(held_back)) == ("train", "eval")
    dag = create_pipeline(pipeline_root=str(tmp_path / "root"), data_root=str(held_back),
                          serving_model_dir=str(tmp_path / "serving"), profile=TINY)
    nodes = {node.id: node for node in dag.components}
    assert [split["name"] for split in json.loads(nodes["DialogExampleGen"].exec_properties["input_config"])[
        "splits"]] == ["train", "eval"]
    for name in ("Template", "MemN2N", "Embeddings"):
        assert nodes[f"{name}Evaluator"].exec_properties["example_splits"] == '["eval"]'
    for split in ("trn", "dev"):
        for path in held_back.glob(f"*-{split}.txt"):
            path.unlink()
    with pytest.raises(FileNotFoundError, match=r"no file matches .*trn\.txt \(train\) or .*dev\*\.txt \(eval\)"):
        corpus_splits(str(held_back))


def test_only_a_corpus_with_challenge_sets_is_sliced_by_challenge(corpus: Path, tmp_path: Path) -> None:
    import tensorflow_model_analysis as tfma
    from google.protobuf import json_format

    from data.banking.generation import BankingPlan
    from data.banking.generation import generate as generate_banking
    from pipeline.pipeline import create_pipeline

    generate_banking(BankingPlan(seed=4, train_dialogs=2, dev_dialogs=1, test_dialogs=2), tmp_path / "banking")
    # Each corpus trains its paper's models: banking's with its own profile (Majumdar et al.'s SMN, our state ranker).
    for data, sliced, profile, evaluator in ((corpus, False, TINY, "MemN2NEvaluator"),
                                             (tmp_path / "banking", True, "quick", "SMNEvaluator")):
        dag = create_pipeline(pipeline_root=str(tmp_path / "root"), data_root=str(data),
                              serving_model_dir=str(tmp_path / "serving"), profile=profile)
        nodes = {node.id: node for node in dag.components}
        config = json_format.Parse(nodes[evaluator].exec_properties["eval_config"], tfma.EvalConfig())
        keys = [list(spec.feature_keys) for spec in config.slicing_specs]
        assert [] in keys and ["task", "split"] in keys and (["challenge"] in keys) == sliced, data
        trained = {node.id: json.loads(node.exec_properties["custom_config"]) for node in dag.components
                   if node.id.endswith("Trainer")}
        assert {name: config["method"] for name, config in trained.items()} == (
            {"StateRankerTrainer": "state_ranker", "SMNTrainer": "smn"} if sliced else
            {"TemplateTrainer": "template_memn2n", "MemN2NTrainer": "memn2n", "EmbeddingsTrainer": "embeddings"}), data
    smn = {key: trained["SMNTrainer"][key] for key in ("embedding_dim", "learning_rate", "batch_size", "hops",
                                                       "max_memory")}
    assert smn == {"embedding_dim": 128, "learning_rate": 0.001, "batch_size": 32, "hops": 3, "max_memory": 40}
    assert {"dim", "filler_units", "removed"} <= set(trained["StateRankerTrainer"])  # its own config, not a network's


def test_a_profile_names_known_models_the_product_model_first() -> None:
    from dataclasses import replace

    assert replace(TINY, models=("template", "memn2n")).models == ("template", "memn2n")
    for models in ((), ("memn2n", "template"), ("template", "rnn"), ("template", "memn2n", "memn2n")):
        with pytest.raises(ValueError, match="models must be some of"):
            replace(TINY, models=models)


def test_the_summary_reports_the_models_of_the_run_alone(finished: dict) -> None:
    summary = run_summary(finished["metadata"], replace(TINY, models=("template", "memn2n")).products())
    assert list(summary["models"]) == ["template", "memn2n"] and summary["model"] == "template"
    assert summary["blessed"] == finished["summary"]["blessed"]


def test_one_task_alone_trains_with_its_own_presets() -> None:
    from models.babi.profiles import FULL, QUICK

    six = QUICK.for_tasks([6])
    assert (six.template.hops, six.template.embedding_dim, six.template.epochs) == (4, 128, QUICK.template.epochs)
    assert six.template.fill_epochs == QUICK.template.fill_epochs != FULL.template.fill_epochs  # the profile's
    # task 6's product model: HCN, averaged over seeds
    assert six.template.encoder == "lstm" and six.template.action_mask and six.template.ensemble == SEED_ENSEMBLE
    assert QUICK.for_tasks([5]).template.encoder == "memn2n"
    assert six.template.model == "template" and six.memn2n.match_type and (six.memn2n.hops, six.memn2n.epochs) == (
        4, QUICK.memn2n.epochs)
    assert six.embeddings.learning_rate == 0.001 and not six.embeddings.use_history  # Table 8's task-6 row
    assert six.min_accuracy == {"template": 0.4, "memn2n": 0.3, "embeddings": 0.15}  # real dialogs' floors
    assert QUICK.for_tasks([1, 2, 3, 4, 5]) is QUICK


def test_the_quick_profile_reports_the_test_sets_of_the_product_model_alone(corpus: Path, tmp_path: Path) -> None:
    from models.babi.profiles import FULL, QUICK
    from pipeline.pipeline import create_pipeline
    from pipeline.summary import evaluated_splits

    everyone = ("Template", "MemN2N", "Embeddings")
    for profile, tested, trained in ((QUICK, {"Template"}, ("Template", "MemN2N")), (FULL, set(everyone), everyone),
                                     (TINY, set(everyone), everyone)):
        dag = create_pipeline(pipeline_root=str(tmp_path / "root"), data_root=str(corpus),
                              serving_model_dir=str(tmp_path / "serving"), profile=profile)
        splits = {node.id.removesuffix("Evaluator"): json.loads(node.exec_properties["example_splits"])
                  for node in dag.components if node.id.endswith("Evaluator")}
        assert splits == {name: ["eval", "test"] if name in tested else ["eval"] for name in trained}, profile.name
        # A model the profile leaves out has no component at all (the quick profile: no embeddings).
        assert {node.id for node in dag.components if node.id.startswith(everyone)} == {
            f"{name}{part}" for name in trained for part in ("Trainer", "LatestBlessedModel", "Evaluator", "Pusher")}
    assert evaluated_splits({"overall": {}, "split=dev": {}, "split=dev,task=babi-1": {}, "task=babi-1": {}}) == ["dev"]


def test_the_report_shows_each_models_slices_curves_attention_and_card(finished: dict) -> None:
    """The page of the run: blessing and pushed path, the slice numbers MLMD holds, training curves and attention
    maps as inline PNGs, the data gate's report, TFDV's view; a model card per model with its dev figures."""
    import base64

    from pipeline.report import write_report

    root = finished["pipeline_root"].parent.parent
    page = write_report(root, TINY.products(), finished["corpus"])
    text = page.read_text()
    # the newest run's (reruns here)
    template = run_summary(finished["metadata"], TINY.products())["models"]["template"]
    assert "blessed: <b>True</b>" in text and str(template["pushed_model"]) in text
    assert f"<td>{template['slices']['split=dev']['per_response_accuracy']}</td>" in text
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    # A curve for each model that trained two epochs or more (a single epoch is no curve), attention maps through
    # the two pushed ones.
    from pipeline.report import _training_summary
    from pipeline.summary import metadata_reader

    store = metadata_reader(finished["metadata"])
    epochs = {p.slot: len((lambda t: t.get("template_model", t))(_training_summary(store, p.component)).get("history")
                          or []) for p in TINY.products()}
    assert any(n >= 2 for n in epochs.values()), epochs
    assert sorted(re.findall(r'alt="(\w+) training curves"', text)) == sorted(m for m, n in epochs.items() if n >= 2)
    assert len(re.findall(r'alt="\w+ attention"', text)) >= 2
    assert all(base64.b64decode(image)[:8] == b"\x89PNG\r\n\x1a\n" for image in images)
    assert "answers_not_in_candidates" in text and "<iframe class=\"stats\" srcdoc=" in text
    card = (page.parent / "model_card_template.md").read_text()
    assert card.startswith("# Model card: template") and "blessed: True" in card and "| split=dev |" in card
    assert re.search(r"best epoch [12] of 2 run", card)  # the template model's (TINY: 2 epochs)
    assert "not pushed" in (page.parent / "model_card_embeddings.md").read_text()  # refused by the floor
    browser = shutil.which("chromium")
    if browser is None:
        return  # Debian's chromium package is not installed: the page is checked as text above only
    import subprocess

    import matplotlib.image

    shot = page.parent / "screenshot.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1600"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    assert f"<td>{template['slices']['split=dev']['per_response_accuracy']}</td>" in dom and "model card" in dom
    subprocess.run([browser, *flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, check=True,
                   timeout=120)
    pixels = matplotlib.image.imread(shot)
    assert pixels.std() > 0.05  # not a blank page


def _metadata_store_cut_in_half(path: Path) -> None:
    """An ML Metadata store of some hundred pages, as a run writes it, then cut to half its size (a full disk, an
    interrupted copy)."""
    import os

    from ml_metadata.metadata_store import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    path.parent.mkdir(parents=True)
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(path)
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    store = metadata_store.MetadataStore(config)
    kind = store.put_artifact_type(metadata_store_pb2.ArtifactType(name="Examples"))
    store.put_artifacts([metadata_store_pb2.Artifact(type_id=kind, uri=f"{path.parent}/Examples/{i}/" + "x" * 200)
                         for i in range(300)])
    del store
    os.truncate(path, path.stat().st_size // 2)


def test_a_damaged_metadata_store_is_one_line_naming_it_and_the_root_is_left_as_it_is(corpus: Path,
                                                                                     tmp_path: Path) -> None:
    """Both ended in MLMD's traceback (RuntimeError: ... database disk image is malformed), naming neither the file
    nor what to do."""
    from click.testing import CliRunner

    from pipeline.cli import main

    root = tmp_path / "root"
    store = root / "metadata" / "metadata.db"
    _metadata_store_cut_in_half(store)
    before = {path: path.read_bytes() if path.is_file() else None for path in root.rglob("*")}
    expected = (f"Error: {store}: the pipeline's ML Metadata store is damaged (database disk image is malformed); "
                f"{root} was left as it is: run dialog pipeline with a new --root, or move {root} aside and run it "
                "again\n")
    for command in (["pipeline", "--quick", "--root", str(root), "--data", str(corpus), "--tasks", "1"],
                    ["report", str(root)]):
        result = CliRunner().invoke(main, command)
        assert (result.exit_code, result.output) == (1, expected), (command, result.output)
    assert {path: path.read_bytes() if path.is_file() else None for path in root.rglob("*")} == before


def test_a_training_curve_is_drawn_only_where_there_are_epochs_to_draw() -> None:
    """The quick profile's one-epoch summaries were drawn as a single dot on an axis from 0.96 to 1.04."""
    from pipeline.report import training_curves

    one = [{"epoch": 1, "loss": 0.5, "dev_per_response_accuracy": 90.0}]
    assert training_curves(one, "template") is None
    two = [*one, {"epoch": 2, "loss": 0.3, "dev_per_response_accuracy": 95.0}]
    assert training_curves(two, "template").startswith("data:image/png;base64,")


def test_attention_maps_follow_what_the_model_says_it_is(tmp_path: Path, monkeypatch) -> None:
    """By the model's spec, not by its method's name: a model holding a long-term KB memory gets the Movie Dialog
    maps (none for a model without attention: no hops), any other the maps over the dialog's lines."""
    import numpy as np

    from data.corpus import SILENCE
    from models.examples import TurnExample
    from models.serving.explain import TurnAttention
    from models.serving.ranker import LONG_TERM_MEMORY, SPEC_ASSET
    from pipeline import report

    calls = []
    monkeypatch.setattr(report, "attention_maps", lambda model_dir, data: calls.append("dialog") or ["dialog"])
    monkeypatch.setattr(report, "movie_attention_maps", lambda model_dir, data: calls.append("movie") or ["movie"])
    for name, spec in (("babi", {"candidates": []}), ("movie", {LONG_TERM_MEMORY: {"kb_sentences": 30}})):
        (tmp_path / name / "assets").mkdir(parents=True)
        (tmp_path / name / "assets" / SPEC_ASSET).write_text(json.dumps(spec))
    assert report.model_attention_maps(str(tmp_path / "babi"), tmp_path) == ["dialog"]
    assert report.model_attention_maps(str(tmp_path / "movie"), tmp_path) == ["movie"]
    assert report.model_attention_maps("", tmp_path) == [] and calls == ["dialog", "movie"]
    example = TurnExample("d", "movie", "dev", 0, ("a", "b"), ("kb", "user"), SILENCE, "x")
    turns = [TurnAttention(example, "x", np.zeros((hops, 2))) for hops in (0, 2)]
    assert len(report.drawn_attention(turns)) == 1  # the embeddings' turn (no hops) has no map
