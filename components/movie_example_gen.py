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
from typing import Any

import apache_beam as beam
import tensorflow as tf
from tfx.components.example_gen import write_split
from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.components.util import examples_utils
from tfx.dsl.components.base import base_beam_executor, executor_spec
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs

from data.atomic import write_text_atomic
from data.movie.reader import (
    MovieCorpus,
    discover_movie_corpus,
    read_kb,
)
from data.reading import text_lines
from models.gfile import GFILE
from models.movie.records import movie_candidates, task_file_records, write_tfrecords

# TFX split -> the Movie Dialog split of its files.
MOVIE_SPLITS: dict[str, str] = {"train": "train", "eval": "dev", "test": "test"}
RESOURCES_FILE = "corpus/movie_resources.json"


def movie_input_config() -> example_gen_pb2.Input:
    """The three splits; each pattern is what the driver fingerprints (so a changed corpus is read again): the
    executor finds the files itself (``data.movie.reader.discover_movie_corpus``)."""
    return example_gen_pb2.Input(splits=[
        example_gen_pb2.Input.Split(name=name, pattern=f"task*/*_{split}.txt") for name, split in MOVIE_SPLITS.items()])


def _corpus(input_base: str) -> MovieCorpus:
    """The corpus under ``input_base``: on the local disk, or (``gs://`` and the like, as on Dataflow or Vertex AI)
    through TensorFlow's file systems."""
    corpus = discover_movie_corpus(input_base, GFILE if "://" in input_base else None)
    if corpus.entities is None or corpus.kb is None:
        raise FileNotFoundError(f"{input_base}: a Movie Dialog corpus needs entities.txt and movie_kb.txt (the "
                                "candidates of tasks 1-3 and the long-term memory)")
    return corpus


def _write_job(job: tuple[str, int, str, str], split_uri: str) -> tuple[str, int]:
    """Write one task file's examples as one gzipped TFRecord file of the split; the candidate set is built where
    the job runs (a closure over it would be pickled with every bundle). Returns the file and its example count."""
    path, task, split, input_base = job
    corpus = _corpus(input_base)
    entities = corpus.entity_list()
    target = posixpath.join(split_uri, f"data_tfrecord-task{task}.gz")
    with text_lines(path, fileio) as lines:
        count = write_tfrecords(target, task_file_records(lines, path, task, split, entities,
                                                          movie_candidates(corpus, entities)))
    return target, count


def write_movie_resources(examples_uri: str, corpus: MovieCorpus) -> None:
    entities = corpus.entity_list()
    triples = read_kb(corpus.kb, entities, corpus.fs) if corpus.kb is not None else []
    write_text_atomic(posixpath.join(examples_uri, RESOURCES_FILE), json.dumps({
        "tasks": sorted(corpus.tasks), "entities": entities,
        "candidates": movie_candidates(corpus, entities).to_json(),
        "triples": [[t.subject, t.relation, t.value] for t in triples]}), GFILE)


def read_movie_resources(examples_uri: str) -> dict[str, Any]:
    path = posixpath.join(examples_uri, RESOURCES_FILE)
    if not fileio.exists(path):
        raise FileNotFoundError(f"{path}: the Examples artifact has no Movie Dialog resources; was it written by "
                                "MovieExampleGen?")
    with fileio.open(path, "r") as handle:
        return json.loads(handle.read())


class Executor(base_beam_executor.BaseBeamExecutor):
    """Writes each split's files itself, one per task file, then the corpus resources, into the Examples artifact.

    TFX's ExampleGen executor hands every example to Beam's ``WriteToTFRecord``, whose writing step takes a side
    input; Beam's local runner then holds the whole split in memory before writing it (a paper-scale training split,
    5.9M exchanges, grew past 3 GB before the first byte was written). Here each Beam job streams its task file into
    its own output file, so no split is ever held."""

    def Do(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
           exec_properties: dict[str, Any]) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
        corpus = _corpus(input_base)
        examples = artifact_utils.get_single_instance(output_dict[standard_component_specs.EXAMPLES_KEY])
        examples.split_names = artifact_utils.encode_split_names(list(MOVIE_SPLITS))
        jobs = [((str(files[split]), task, split, input_base), artifact_utils.get_split_uri([examples], name))
                for name, split in MOVIE_SPLITS.items() for task, files in sorted(corpus.tasks.items())
                if split in files]
        missing = [name for name, split in MOVIE_SPLITS.items() if not any(j[0][2] == split for j in jobs)]
        if missing:
            raise FileNotFoundError(f"{input_base}: no Movie Dialog task file for the {', '.join(missing)} split")
        for _, split_uri in jobs:
            tf.io.gfile.makedirs(split_uri)
        with self._make_beam_pipeline() as pipeline:
            _ = (pipeline
                 | "TaskFiles" >> beam.Create(jobs)
                 | "Reshuffle" >> beam.Reshuffle()
                 | "WriteExamples" >> beam.MapTuple(_write_job))
        examples_utils.set_payload_format(examples, example_gen_pb2.PayloadFormat.FORMAT_TF_EXAMPLE)
        examples_utils.set_file_format(examples, write_split.to_file_format_str(example_gen_pb2.FORMAT_TFRECORDS_GZIP))
        write_movie_resources(examples.uri, corpus)


def MovieExampleGen(input_base: Any) -> FileBasedExampleGen:  # noqa: N802 (component)
    """The component over a Movie Dialog corpus directory."""
    return FileBasedExampleGen(input_base=input_base, input_config=movie_input_config(),
                               custom_executor_spec=executor_spec.BeamExecutorSpec(Executor))
