"""The same pipeline compiles to a Kubeflow Pipelines v2 / Vertex AI job, offline."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

BEAM_ARGS = ["--runner=DataflowRunner", "--project=my-project", "--region=europe-west1"]


@pytest.fixture(scope="module")
def kf() -> SimpleNamespace:
    """The runner and TFX's Vertex AI modules, imported when a test of this file first runs, not when the file is
    collected: they import the Vertex AI client, whose start-up costs seconds in every xdist worker that collects
    the suite, and only one of them runs this file."""
    from tfx.extensions.google_cloud_ai_platform.constants import ENABLE_VERTEX_KEY, VERTEX_REGION_KEY
    from tfx.extensions.google_cloud_ai_platform.trainer.executor import TRAINING_ARGS_KEY
    from tfx.extensions.google_cloud_ai_platform.training_clients import VertexJobClient
    from tfx.utils import name_utils

    from components.vertex_training import VertexExecutor
    from pipeline.kubeflow_v2_runner import FLAGS, OUTPUT_FILE, compile_pipeline, main, vertex_training

    return SimpleNamespace(ENABLE_VERTEX_KEY=ENABLE_VERTEX_KEY, VERTEX_REGION_KEY=VERTEX_REGION_KEY,
                           TRAINING_ARGS_KEY=TRAINING_ARGS_KEY, VertexJobClient=VertexJobClient,
                           name_utils=name_utils, VertexExecutor=VertexExecutor, FLAGS=FLAGS, OUTPUT_FILE=OUTPUT_FILE,
                           compile_pipeline=compile_pipeline, main=main, vertex_training=vertex_training)


def test_compiles_with_components_in_order(tmp_path: Path, kf: SimpleNamespace) -> None:
    path = kf.compile_pipeline(str(tmp_path), "gcr.io/my-project/dialog:1", "gs://bucket/root", "gs://bucket/serving",
                               beam_args=BEAM_ARGS)
    spec = json.loads(path.read_text())["pipelineSpec"]
    tasks = spec["root"]["dag"]["tasks"]
    assert {"DialogExampleGen", "StatisticsGen", "SchemaGen", "CuratedSchema", "ExampleValidator", "DialogDataGate",
            "MemN2NTrainer", "MemN2NEvaluator", "MemN2NPusher", "EmbeddingsTrainer", "EmbeddingsEvaluator",
            "EmbeddingsPusher"} <= set(tasks)

    def upstream(name: str) -> set[str]:
        return set(tasks[name].get("dependentTasks", []))

    assert upstream("StatisticsGen") == {"DialogExampleGen"}
    assert upstream("ExampleValidator") == {"StatisticsGen", "CuratedSchema"}
    assert "ExampleValidator" in upstream("DialogDataGate")
    for name in ("MemN2N", "Embeddings"):
        assert "DialogDataGate" in upstream(f"{name}Trainer")  # nothing trains on data the gate refused
        assert f"{name}Trainer" in upstream(f"{name}Evaluator")
        assert upstream(f"{name}Pusher") == {f"{name}Trainer", f"{name}Evaluator"}
    assert "data_root" in spec["root"]["inputDefinitions"]["parameters"]  # the corpus is a run-time parameter
    text = path.read_text()
    assert all(arg in text for arg in BEAM_ARGS) and "gcr.io/my-project/dialog:1" in text
    assert "--setup_file=/app/setup.py" in text  # Dataflow's workers install the project from the image's copy


def test_the_beam_stages_ship_the_project_unless_told_how_to_get_code() -> None:
    from pipeline.configs import with_code_shipped

    assert with_code_shipped(["--runner=DataflowRunner"], "/app/setup.py") == (
        "--runner=DataflowRunner", "--setup_file=/app/setup.py")
    for given in ("--sdk_container_image=gcr.io/p/beam:1", "--extra_packages=dist/x.tar.gz", "--setup_file=s.py"):
        assert with_code_shipped(["--runner=DataflowRunner", given], "/app/setup.py") == (
            "--runner=DataflowRunner", given)
    assert with_code_shipped(["--runner=DirectRunner"], None) == ("--runner=DirectRunner",)


def trainer_config(spec: dict, name: str) -> dict:
    """The custom_config a compiled Trainer task is given."""
    parameters = spec["root"]["dag"]["tasks"][name]["inputs"]["parameters"]
    return json.loads(parameters["custom_config"]["runtimeValue"]["constantValue"]["stringValue"])


def test_workers_and_accelerator_make_the_trainers_vertex_jobs(tmp_path: Path, kf: SimpleNamespace) -> None:
    kf.FLAGS(["kubeflow_v2_runner", f"--output_dir={tmp_path}", "--image=gcr.io/my-project/dialog:1", "--workers=3",
              "--accelerator=NVIDIA_TESLA_T4:1", *(f"--beam_arg={arg}" for arg in BEAM_ARGS)])
    try:
        kf.main([])
    finally:
        kf.FLAGS.unparse_flags()
    spec = json.loads((tmp_path / kf.OUTPUT_FILE).read_text())["pipelineSpec"]
    trainers = [name for name in spec["root"]["dag"]["tasks"] if name.endswith("Trainer")]
    assert {"MemN2NTrainer", "EmbeddingsTrainer"} <= set(trainers)
    for name in trainers:
        config = trainer_config(spec, name)
        assert config[kf.ENABLE_VERTEX_KEY] is True and config[kf.VERTEX_REGION_KEY] == "europe-west1"
        job = config[kf.TRAINING_ARGS_KEY]
        assert job["project"] == "my-project"
        pools = job["job_spec"]["worker_pool_specs"]
        assert [pool["replica_count"] for pool in pools] == [1, 2]  # the chief, then the other two workers
        for pool in pools:
            assert pool["machine_spec"] == {"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_TESLA_T4",
                                            "accelerator_count": 1}
            assert pool["container_spec"] == {"image_uri": "gcr.io/my-project/dialog:1"}
        executor = spec["deploymentSpec"]["executors"][f"{name}_executor"]["container"]
        assert "components.vertex_training.VertexExecutor" in executor["args"]


def test_without_workers_or_accelerator_the_trainers_train_in_their_step(tmp_path: Path, kf: SimpleNamespace) -> None:
    assert kf.vertex_training("gcr.io/my-project/dialog:1", BEAM_ARGS) is None
    spec = json.loads(kf.compile_pipeline(str(tmp_path), "gcr.io/my-project/dialog:1", "gs://bucket/root",
                                          "gs://bucket/serving", beam_args=BEAM_ARGS).read_text())["pipelineSpec"]
    assert not any(key.startswith("ai_platform_") for key in trainer_config(spec, "MemN2NTrainer"))


def test_the_vertex_job_runs_the_dialog_trainers_executor_on_its_pools(kf: SimpleNamespace) -> None:
    vertex = kf.vertex_training("gcr.io/my-project/dialog:1", BEAM_ARGS, workers=2, accelerator="NVIDIA_TESLA_T4")
    assert vertex is not None and (vertex.accelerator_type, vertex.accelerator_count) == ("NVIDIA_TESLA_T4", 1)
    args = vertex.custom_config()[kf.TRAINING_ARGS_KEY]
    args.pop("project")  # as TFX's runner does before it makes the job
    client = object.__new__(kf.VertexJobClient)  # the job as TFX makes it; no client, nothing sent
    job = client.create_training_job({}, {}, {"custom_config": "{}"}, kf.name_utils.get_full_name(
        kf.VertexExecutor()._GetExecutorClass()), args, None, None)
    pools = job["job_spec"]["worker_pool_specs"]
    assert [pool["replica_count"] for pool in pools] == [1, 1]
    for pool in pools:
        command = pool["container_spec"]["command"]
        assert command[command.index("--executor_class_path") + 1] == "components.trainer_base.Executor"
        assert pool["container_spec"]["image_uri"] == "gcr.io/my-project/dialog:1"


@pytest.mark.parametrize(("beam_args", "accelerator", "refused"), [
    (["--runner=DataflowRunner"], "NVIDIA_TESLA_T4:1", "project and region"),
    (BEAM_ARGS, "NVIDIA_TESLA_T4:0", "TYPE:COUNT"),
    (BEAM_ARGS, ":2", "TYPE:COUNT"),
])
def test_a_vertex_job_that_cannot_run_is_refused(beam_args: list[str], accelerator: str, refused: str,
                                                 kf: SimpleNamespace) -> None:
    with pytest.raises(ValueError, match=refused):
        kf.vertex_training("gcr.io/my-project/dialog:1", beam_args, accelerator=accelerator)


def test_the_movie_pipeline_compiles_with_its_trainer_on_vertex_workers(tmp_path: Path, kf: SimpleNamespace) -> None:
    kf.FLAGS(["kubeflow_v2_runner", f"--output_dir={tmp_path}", "--image=gcr.io/my-project/dialog:1", "--workers=2",
              "--paper=movie", "--profile=quick", "--data_root=gs://bucket/corpora/movies",
              *(f"--beam_arg={arg}" for arg in BEAM_ARGS)])
    try:
        kf.main([])
    finally:
        kf.FLAGS.unparse_flags()
    spec = json.loads((tmp_path / kf.OUTPUT_FILE).read_text())["pipelineSpec"]
    tasks = spec["root"]["dag"]["tasks"]
    assert {"MovieExampleGen", "DialogDataGate", "MemN2NTrainer", "MemN2NEvaluator", "MemN2NPusher"} <= set(tasks)
    assert not any(name.startswith("Embeddings") or name.startswith("Template") for name in tasks)
    config = trainer_config(spec, "MemN2NTrainer")
    assert config["epochs"] == 4 and config["task_sampling"] == 0.0  # the quick movie profile's StreamedConfig
    pools = config[kf.TRAINING_ARGS_KEY]["job_spec"]["worker_pool_specs"]
    assert [pool["replica_count"] for pool in pools] == [1, 1]
    executor = spec["deploymentSpec"]["executors"]["MemN2NTrainer_executor"]["container"]
    assert "components.vertex_training.VertexExecutor" in executor["args"]


def test_the_full_movie_profile_trains_evaluates_and_pushes_the_supervised_embeddings_too(
        tmp_path: Path, kf: SimpleNamespace) -> None:
    spec = json.loads(kf.compile_pipeline(str(tmp_path), "gcr.io/my-project/dialog:1", "gs://bucket/root",
                                          "gs://bucket/serving", paper="movie").read_text())["pipelineSpec"]
    tasks = spec["root"]["dag"]["tasks"]
    for name in ("MemN2N", "Embeddings"):
        assert {f"{name}Trainer", f"{name}Evaluator", f"{name}Pusher"} <= set(tasks)
        assert "DialogDataGate" in set(tasks[f"{name}Trainer"].get("dependentTasks", []))
    assert trainer_config(spec, "EmbeddingsTrainer")["hops"] == 0  # no attention over memory
    memn2n = trainer_config(spec, "MemN2NTrainer")
    assert (memn2n["hops"], memn2n["dictionaries"]) == (1, 2)  # the product's shape, chosen on dev
