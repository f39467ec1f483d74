"""MovieExampleGen: a corpus directory in the Movie Dialog layout -> one tf.Example per exchange (Beam).

The Movie Dialog counterpart of ``DialogExampleGen``: TFX split ``train`` holds the four tasks' ``*_train.txt``,
``eval`` their ``*_dev.txt``, ``test`` their ``*_test.txt``; each task file is one Beam job, read line by line (a
paper-scale training file is never held whole), its texts parsed into appendix A's tokens a chunk at a time. The
features are ``models.movie.records``'; the candidate set (the entities, then task 4's candidate files) and the KB
triples are written into the Examples artifact (``movie_resources.json``), so that the Trainer builds its model
from the same artifact it reads.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from tfx.components.example_gen.base_example_gen_executor import BaseExampleGenExecutor
from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs

from data.atomic import write_text_atomic
from data.movie.reader import (
    TASK_DIRECTORIES,
    MovieCorpus,
    discover_movie_corpus,
    iter_dialogs,
    read_candidates,
    read_kb,
)
from models.gfile import GFILE
from models.movie.examples import MovieExample, dialog_examples
from models.movie.records import MovieCandidates, Parser, movie_tf_examples

# TFX split -> the Movie Dialog split of its files.
MOVIE_SPLITS: dict[str, str] = {"train": "train", "eval": "dev", "test": "test"}
RESOURCES_FILE = "corpus/movie_resources.json"
CHUNK = 1000  # exchanges whose texts are parsed in one call


def is_movie_corpus(input_base: str) -> bool:
    """Whether a directory is in the Movie Dialog layout (a task folder such as ``task1_qa/``)."""
    return any(fileio.isdir(posixpath.join(input_base, name)) for name in TASK_DIRECTORIES.values())


def movie_input_config() -> example_gen_pb2.Input:
    """The three splits; each pattern is what the driver fingerprints (so a changed corpus is read again)."""
    return example_gen_pb2.Input(splits=[
        example_gen_pb2.Input.Split(name=name, pattern=f"task*/*_{split}.txt") for name, split in MOVIE_SPLITS.items()])


def _corpus(input_base: str) -> MovieCorpus:
    corpus = discover_movie_corpus(input_base)
    if corpus.entities is None or corpus.kb is None:
        raise FileNotFoundError(f"{input_base}: a Movie Dialog corpus needs entities.txt and movie_kb.txt (the "
                                "candidates of tasks 1-3 and the long-term memory)")
    return corpus


def movie_candidates(corpus: MovieCorpus) -> MovieCandidates:
    return MovieCandidates.of(corpus.entity_list(), {split: read_candidates(path)
                                                     for split, path in corpus.candidates.items()})


def _file_examples(job: tuple[str, int, str, str]) -> Iterator[bytes]:
    """The tf.Examples of one task file; the candidate index is built where the job runs (a closure over it
    would be pickled with every bundle)."""
    path, task, split, input_base = job
    corpus = _corpus(input_base)
    candidates = movie_candidates(corpus)
    indices = candidates.indices()
    entities = corpus.entity_list()
    parser = Parser(entities)
    chunk: list[MovieExample] = []
    with fileio.open(path, "r") as lines:
        for index, dialog in enumerate(iter_dialogs(lines, path, entities)):
            chunk += dialog_examples(dialog, task, split, index)
            if len(chunk) >= CHUNK:
                yield from (e.SerializeToString() for e in movie_tf_examples(chunk, candidates, indices, parser))
                chunk = []
    yield from (e.SerializeToString() for e in movie_tf_examples(chunk, candidates, indices, parser))


@beam.ptransform_fn
@beam.typehints.with_input_types(beam.Pipeline)
@beam.typehints.with_output_types(bytes)
def _MovieFilesToExamples(pipeline: beam.Pipeline, exec_properties: dict[str, Any],  # noqa: N802 (Beam style)
                          split_pattern: str) -> beam.pvalue.PCollection:
    input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
    split = split_pattern.rsplit("_", 1)[1].removesuffix(".txt")
    corpus = _corpus(input_base)
    jobs = [(str(files[split]), task, split, input_base) for task, files in sorted(corpus.tasks.items())
            if split in files]
    if not jobs:
        raise FileNotFoundError(f"{input_base}: no Movie Dialog task has a {split} file")
    return (pipeline
            | "TaskFiles" >> beam.Create(jobs)
            | "Reshuffle" >> beam.Reshuffle()
            | "ExchangeExamples" >> beam.FlatMap(_file_examples))


def write_movie_resources(examples_uri: str, corpus: MovieCorpus) -> None:
    triples = read_kb(corpus.kb, corpus.entity_list()) if corpus.kb is not None else []
    write_text_atomic(posixpath.join(examples_uri, RESOURCES_FILE), json.dumps({
        "tasks": sorted(corpus.tasks), "entities": corpus.entity_list(),
        "candidates": movie_candidates(corpus).to_json(),
        "triples": [[t.subject, t.relation, t.value] for t in triples]}), GFILE)


def read_movie_resources(examples_uri: str) -> dict[str, Any]:
    path = posixpath.join(examples_uri, RESOURCES_FILE)
    if not fileio.exists(path):
        raise FileNotFoundError(f"{path}: the Examples artifact has no Movie Dialog resources; was it written by "
                                "MovieExampleGen?")
    with fileio.open(path, "r") as handle:
        return json.loads(handle.read())


class Executor(BaseExampleGenExecutor):
    """Writes the splits (base class) and then the corpus resources into the same Examples artifact."""

    def GetInputSourceToExamplePTransform(self) -> beam.PTransform:  # noqa: N802 (TFX API)
        return _MovieFilesToExamples

    def Do(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
           exec_properties: dict[str, Any]) -> None:
        corpus = _corpus(exec_properties[standard_component_specs.INPUT_BASE_KEY])
        super().Do(input_dict, output_dict, exec_properties)
        examples = artifact_utils.get_single_instance(output_dict[standard_component_specs.EXAMPLES_KEY])
        write_movie_resources(examples.uri, corpus)


def MovieExampleGen(input_base: Any) -> FileBasedExampleGen:  # noqa: N802 (component)
    """The component over a Movie Dialog corpus directory."""
    return FileBasedExampleGen(input_base=input_base, input_config=movie_input_config(),
                               custom_executor_spec=executor_spec.BeamExecutorSpec(Executor))
