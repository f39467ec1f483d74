"""Compile the `dialog` pipeline for Kubeflow Pipelines v2 / Vertex AI Pipelines (a PipelineJob JSON, offline).

    python pipeline/kubeflow_v2_runner.py --output_dir build --image gcr.io/PROJECT/dialog:latest \\
        --pipeline_root gs://BUCKET/dialog --serving_model_dir gs://BUCKET/serving \\
        --beam_arg=--runner=DataflowRunner --beam_arg=--project=PROJECT --beam_arg=--region=REGION \\
        --beam_arg=--temp_location=gs://BUCKET/tmp

The corpus directory is the run-time parameter ``data_root`` (set it when submitting the job), so the same JSON
runs on any corpus in the dialog-bAbI layout. The container image is this repository installed with
``pip install -c constraints.txt .``; the Beam stages (ExampleGen, StatisticsGen, Evaluator, ...) run wherever
``--beam_arg`` points them: Dataflow as above, or a Flink / Spark job server with ``--runner=PortableRunner
--job_endpoint=HOST:8099 --environment_type=DOCKER``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
from tfx.orchestration import data_types  # noqa: E402
from tfx.orchestration.kubeflow.v2 import kubeflow_v2_dag_runner  # noqa: E402

from data.layout import parse_tasks  # noqa: E402
from pipeline.configs import CURATED_SCHEMA, PIPELINE_NAME, PROFILES  # noqa: E402
from pipeline.pipeline import create_pipeline  # noqa: E402

OUTPUT_FILE = "dialog_pipeline.json"


def compile_pipeline(output_dir: str, image: str, pipeline_root: str, serving_model_dir: str,
                     default_data_root: str = "gs://BUCKET/corpora/restaurant", profile: str = "full",
                     tasks: Sequence[int] = (), beam_args: Sequence[str] = (),
                     schema_file: str = str(CURATED_SCHEMA)) -> Path:
    """Write ``output_dir/dialog_pipeline.json`` and return its path."""
    data_root = data_types.RuntimeParameter(name="data_root", ptype=str, default=default_data_root)
    dag = create_pipeline(pipeline_root=pipeline_root, data_root=data_root, serving_model_dir=serving_model_dir,
                          profile=PROFILES[profile], tasks=tasks, beam_pipeline_args=beam_args,
                          schema_file=schema_file)
    runner = kubeflow_v2_dag_runner.KubeflowV2DagRunner(
        config=kubeflow_v2_dag_runner.KubeflowV2DagRunnerConfig(default_image=image),
        output_dir=output_dir, output_filename=OUTPUT_FILE)
    runner.run(dag, write_out=True)
    return Path(output_dir) / OUTPUT_FILE


FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "build", "Where the pipeline JSON is written.")
flags.DEFINE_string("image", "gcr.io/PROJECT/dialog:latest", "Container image with this repository installed.")
flags.DEFINE_string("pipeline_root", "gs://BUCKET/dialog", "Artifact root of the runs.")
flags.DEFINE_string("serving_model_dir", "gs://BUCKET/serving", "Where blessed models are pushed.")
flags.DEFINE_string("data_root", "gs://BUCKET/corpora/restaurant", "Default of the data_root run-time parameter.")
flags.DEFINE_enum("profile", "full", list(PROFILES), "Training profile.")
flags.DEFINE_list("tasks", [], "Tasks sharing one candidate set (default: all of the corpus).")
flags.DEFINE_multi_string("beam_arg", [], "A Beam pipeline option (repeatable).")
flags.DEFINE_string("schema_file", str(CURATED_SCHEMA),
                    "The curated schema as the container sees it (the repository's pipeline/schema/schema.pbtxt).")


def main(argv: Sequence[str]) -> None:
    del argv
    path = compile_pipeline(FLAGS.output_dir, FLAGS.image, FLAGS.pipeline_root, FLAGS.serving_model_dir,
                            FLAGS.data_root, FLAGS.profile, parse_tasks(",".join(FLAGS.tasks)), FLAGS.beam_arg,
                            FLAGS.schema_file)
    print(f"wrote {path} (pipeline {PIPELINE_NAME})")


if __name__ == "__main__":
    app.run(main)
