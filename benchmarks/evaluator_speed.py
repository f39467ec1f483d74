"""Evaluator speed: each model's TFX Evaluator of a finished pipeline run, with this project's extractors and with
TFMA's defaults, one JSON line each.

    .venv/bin/python benchmarks/evaluator_speed.py [--root pipeline_output] [--data corpora/restaurant] \
        [--profile quick] [--models template,memn2n] [--extractors project,tfma]

``--root`` is a pipeline root after ``make run`` (or ``dialog pipeline``) over the corpus ``--data``: the newest
examples and each model's newest Trainer output are evaluated again, with the pipeline's eval config and the
splits of ``--profile``, by TFX's Evaluator
executor in a child process (its seconds, the executor's alone, and its peak RSS are its own). A line gives the
turns, slices and overall per-response accuracy; ``same_metrics`` says whether every slice's metrics equal
TFMA's default chain's (when both are run). ``--models`` defaults to the profile's (the quick one has no embeddings).
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_speed import REPOSITORY, emit, last_json, run  # noqa: E402

EXTRACTORS = {"project": "components.dialog_extractors", "tfma": None}


def newest(directory: Path) -> Path:
    """The artifact directory with the highest execution id (TFX names them by it)."""
    found = [path for path in directory.iterdir() if path.name.isdigit()]
    if not found:
        raise click.ClickException(f"no artifact under {directory}: run the pipeline first")
    return max(found, key=lambda path: int(path.name))


def evaluate(root: Path, data: Path, model_name: str, profile: str, extractors: str, out: Path) -> dict:
    """Run one Evaluator (in this process) and return its seconds and metrics by slice."""
    from tfx.components.evaluator.executor import Executor
    from tfx.types import artifact_utils, standard_artifacts

    from models import papers
    from pipeline.local_runner import paths
    from pipeline.pipeline import create_pipeline
    from pipeline.summary import raw_slice_metrics

    pipeline_root = paths(root)["pipeline_root"]
    examples = standard_artifacts.Examples()
    (example_gen,) = (path for path in pipeline_root.iterdir() if path.name.endswith("ExampleGen"))
    examples.uri = str(newest(example_gen / "examples"))
    splits = sorted(path.name.removeprefix("Split-") for path in Path(examples.uri).glob("Split-*"))
    examples.split_names = artifact_utils.encode_split_names(splits)
    paper, _ = papers.of_corpus(data)
    name = {p.slot: p.component for p in paper.profiles[profile].products()}[model_name]
    model = standard_artifacts.Model()
    model.uri = str(newest(pipeline_root / f"{name}Trainer" / "model"))
    node = {component.id: component for component in create_pipeline(
        pipeline_root=str(pipeline_root), data_root=str(data), serving_model_dir=str(out / "unused"),
        profile=profile, splits=splits).components}[f"{name}Evaluator"]
    properties = {key: node.exec_properties[key] for key in ("eval_config", "example_splits")}
    if EXTRACTORS[extractors]:
        properties["module_path"] = EXTRACTORS[extractors]
    evaluation, blessing = standard_artifacts.ModelEvaluation(), standard_artifacts.ModelBlessing()
    evaluation.uri, blessing.uri = str(out / "evaluation"), str(out / "blessing")
    (out / "evaluation").mkdir(), (out / "blessing").mkdir()
    started = time.perf_counter()
    Executor().Do({"examples": [examples], "model": [model]}, {"evaluation": [evaluation], "blessing": [blessing]},
                  properties)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 1), "metrics": raw_slice_metrics(evaluation.uri),
            "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2, 2)}


@click.command()
@click.option("--root", default=str(REPOSITORY / "pipeline_output"), show_default=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--data", default=str(REPOSITORY / "corpora" / "restaurant"), show_default=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path), help="The corpus the run read.")
@click.option("--profile", default="quick", show_default=True, type=click.Choice(["quick", "full"]))
@click.option("--models", default="", help="Comma-separated (default: the profile's models).")
@click.option("--extractors", default="project,tfma", show_default=True)
@click.option("--child", hidden=True, default="", help="model:extractors, run in this process (internal).")
def main(root: Path, data: Path, profile: str, models: str, extractors: str, child: str) -> None:
    if child:
        model_name, chain = child.split(":")
        with tempfile.TemporaryDirectory() as work:
            click.echo(json.dumps(evaluate(root.resolve(), data.resolve(), model_name, profile, chain, Path(work))))
        return
    from models import papers

    paper, _ = papers.of_corpus(data)
    slots = [product.slot for product in paper.profiles[profile].products()]
    for model_name in models.split(",") if models else slots:
        if model_name not in slots:
            raise click.BadParameter(f"the {profile} profile of {paper.title} has no {model_name} (it has "
                                     f"{', '.join(slots)})", param_hint="--models")
        results = {}
        for chain in extractors.split(","):
            _, _, out = run([sys.executable, __file__, "--root", str(root.resolve()), "--data", str(data.resolve()),
                             "--profile", profile,
                             "--child", f"{model_name}:{chain}"])
            results[chain] = last_json(out)
        for chain, result in results.items():
            overall = result["metrics"].get("overall", {})
            emit({"measure": "evaluator", "model": model_name, "extractors": chain, "seconds": result["seconds"],
                  "peak_rss_gb": result["peak_rss_gb"], "turns": overall.get("turns"),
                  "slices": len(result["metrics"]), "per_response": overall.get("per_response_accuracy"),
                  "same_metrics": (all(other["metrics"] == result["metrics"] for other in results.values())
                                   if len(results) > 1 else None)})


if __name__ == "__main__":
    main()
