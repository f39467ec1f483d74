"""The same pipeline compiles to a Kubeflow Pipelines v2 / Vertex AI job, offline."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.kubeflow_v2_runner import compile_pipeline

BEAM_ARGS = ["--runner=DataflowRunner", "--project=my-project", "--region=europe-west1"]


def test_compiles_with_components_in_order(tmp_path: Path) -> None:
    path = compile_pipeline(str(tmp_path), "gcr.io/my-project/dialog:1", "gs://bucket/root", "gs://bucket/serving",
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
