"""Compile the `dialog` pipeline for Kubeflow Pipelines v2 / Vertex AI Pipelines (a PipelineJob JSON, offline).

    python pipeline/kubeflow_v2_runner.py --output_dir build --image gcr.io/PROJECT/dialog:latest \\
        --pipeline_root gs://BUCKET/dialog --serving_model_dir gs://BUCKET/serving \\
        --beam_arg=--runner=DataflowRunner --beam_arg=--project=PROJECT --beam_arg=--region=REGION \\
        --beam_arg=--temp_location=gs://BUCKET/tmp

With ``--workers N`` (N > 1) or ``--accelerator TYPE:COUNT`` (e.g. ``NVIDIA_TESLA_T4:1``) the Trainers run as Vertex AI
custom jobs (``components.vertex_training``): a chief and N - 1 workers on ``--machine_type``, each with the
accelerators, in the project and region of the ``--beam_arg``s (``--project=``, ``--region=``); ``TF_CONFIG`` makes
them train as one (``models.distribute``).

The corpus directory is the run-time parameter ``data_root`` (set it when submitting the job), so the same JSON
runs on any corpus of the paper ``--paper`` names (``babi`` by default; ``banking``, ``movie``: the Movie Dialog
pipeline), with that paper's ``--profile``. The container image is this repository installed with
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

from components.vertex_training import VertexTraining, parse_accelerator  # noqa: E402
from data.layout import parse_tasks  # noqa: E402
from models import papers  # noqa: E402
from pipeline.configs import IMAGE_SETUP_FILE, PIPELINE_NAME, with_code_shipped  # noqa: E402
from pipeline.pipeline import create_pipeline  # noqa: E402

OUTPUT_FILE = "dialog_pipeline.json"
DEFAULT_MACHINE_TYPE = "n1-standard-4"  # an N1 machine: the one family every Vertex AI GPU attaches to


def beam_option(beam_args: Sequence[str], name: str) -> str | None:
    """The value of ``--name=value`` among the Beam arguments (the last one given), or None."""
    values = [arg.split("=", 1)[1] for arg in beam_args if arg.startswith(f"--{name}=")]
    return values[-1] if values else None


def vertex_training(image: str, beam_args: Sequence[str], workers: int = 1, accelerator: str | None = None,
                    machine_type: str = DEFAULT_MACHINE_TYPE) -> VertexTraining | None:
    """The Trainers' Vertex AI job for ``--workers`` and ``--accelerator`` (None: they train in the pipeline's own
    step, as before); the project and region are the Beam arguments' (Dataflow's)."""
    if workers == 1 and not accelerator:
        return None
    project, region = beam_option(beam_args, "project"), beam_option(beam_args, "region")
    if not project or not region:
        raise ValueError("training on Vertex AI (--workers > 1 or --accelerator) needs the project and region: give "
                         "--beam_arg=--project=PROJECT --beam_arg=--region=REGION")
    kind, count = parse_accelerator(accelerator) if accelerator else (None, 0)
    return VertexTraining(project=project, region=region, image=image, workers=workers, machine_type=machine_type,
                          accelerator_type=kind, accelerator_count=count)


def compile_pipeline(output_dir: str, image: str, pipeline_root: str, serving_model_dir: str,
                     default_data_root: str = "gs://BUCKET/corpora/restaurant", profile: str = "full",
                     tasks: Sequence[int] = (), beam_args: Sequence[str] = (),
                     schema_file: str | None = None, vertex: VertexTraining | None = None,
                     paper: str = "babi") -> Path:
    """Write ``output_dir/dialog_pipeline.json`` and return its path: the pipeline of ``paper`` (``models.papers``;
    the corpus is known only at run time); with ``vertex`` (:func:`vertex_training`) the Trainers run as Vertex AI
    jobs on its worker pool."""
    data_root = data_types.RuntimeParameter(name="data_root", ptype=str, default=default_data_root)
    beam_args = with_code_shipped(beam_args, IMAGE_SETUP_FILE)  # the project's code to Dataflow/Flink/Spark workers
    dag = create_pipeline(pipeline_root=pipeline_root, data_root=data_root, serving_model_dir=serving_model_dir,
                          profile=profile, tasks=tasks, paper=paper, beam_pipeline_args=beam_args,
                          schema_file=schema_file, vertex=vertex)
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
flags.DEFINE_enum("profile", "full", ["quick", "full"], "Training profile (each paper has both).")
flags.DEFINE_list("tasks", [], "Tasks sharing one candidate set (default: all of the corpus).")
flags.DEFINE_multi_string("beam_arg", [], "A Beam pipeline option (repeatable).")
flags.DEFINE_string("schema_file", None,
                    "The curated schema as the container sees it (default: the repository's "
                    "pipeline/schema/schema.pbtxt, or movie_schema.pbtxt for Movie Dialog).")
flags.DEFINE_string("paper", "babi", "The paper whose pipeline is compiled (models.papers: babi, banking, movie, or "
                    "one DIALOG_PAPERS names); data_root is then a corpus of that paper.")
flags.DEFINE_integer("workers", 1, "Workers training each model together (>1: the Trainers run as Vertex AI jobs).",
                     lower_bound=1)
flags.DEFINE_string("accelerator", None, "Accelerators of each training worker, TYPE:COUNT (e.g. NVIDIA_TESLA_T4:1; "
                    "the Trainers then run as Vertex AI jobs).")
flags.DEFINE_string("machine_type", DEFAULT_MACHINE_TYPE, "Machine type of each Vertex AI training worker.")


def main(argv: Sequence[str]) -> None:
    del argv
    vertex = vertex_training(FLAGS.image, FLAGS.beam_arg, FLAGS.workers, FLAGS.accelerator, FLAGS.machine_type)
    path = compile_pipeline(FLAGS.output_dir, FLAGS.image, FLAGS.pipeline_root, FLAGS.serving_model_dir,
                            FLAGS.data_root, FLAGS.profile, parse_tasks(",".join(FLAGS.tasks)), FLAGS.beam_arg,
                            FLAGS.schema_file, vertex, papers.get(FLAGS.paper).name)
    print(f"wrote {path} (pipeline {PIPELINE_NAME})")


if __name__ == "__main__":
    app.run(main)
