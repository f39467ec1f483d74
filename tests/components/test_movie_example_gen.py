"""MovieExampleGen reads a corpus that is not on the local disk (gs:// on Dataflow or Vertex AI; TensorFlow's ram://
here) exactly as it reads a local one."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import tensorflow as tf
from tfx.types import standard_artifacts, standard_component_specs

from components.movie_example_gen import Executor
from data.movie.tasks import MoviePlan, generate


def run_executor(input_base: str, out: Path) -> dict[str, int]:
    examples = standard_artifacts.Examples()
    examples.uri = str(out)
    Executor().Do({}, {standard_component_specs.EXAMPLES_KEY: [examples]},
                  {standard_component_specs.INPUT_BASE_KEY: input_base})
    return {path.relative_to(out).as_posix(): sum(1 for _ in tf.data.TFRecordDataset(str(path), "GZIP"))
            for path in sorted(out.glob("Split-*/*.gz"))}


def test_a_corpus_on_another_file_system_gives_the_same_examples(tmp_path: Path) -> None:
    corpus = tmp_path / "movies"
    generate(MoviePlan(seed=1, scale="tiny"), corpus)
    remote = f"ram://movies-{uuid.uuid4().hex}"
    for path in corpus.rglob("*"):
        if path.is_file():
            target = f"{remote}/{path.relative_to(corpus).as_posix()}"
            tf.io.gfile.makedirs(target.rsplit("/", 1)[0])
            tf.io.gfile.copy(str(path), target)
    local = run_executor(str(corpus), tmp_path / "local")
    assert len(local) == 12 and all(local.values())  # four tasks x three splits
    assert run_executor(remote, tmp_path / "remote") == local
    resources = [json.loads((tmp_path / run / "corpus" / "movie_resources.json").read_text())
                 for run in ("local", "remote")]
    assert resources[0] == resources[1] and resources[0]["triples"] and resources[0]["candidates"]["texts"]
