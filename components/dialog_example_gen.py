"""DialogExampleGen: a corpus directory in the dialog-bAbI layout -> one tf.Example per bot turn (Beam).

A FileBasedExampleGen with its own executor: each input split is a file pattern (``train``: the ``trn`` files,
``eval``: ``dev`` and the banking development challenge sets ``dev-OOP``, ``test``: ``tst``, ``tst-OOV`` and the
banking ``tst-OOT``), files are read whole so dialogs
never straddle splits, and the original split name travels in the ``split`` feature, so the Evaluator can slice
``tst`` from ``tst-OOV``. A corpus with a labels sidecar (banking) gives ``split`` ``IT``/``OOT`` to its tests and
``challenge`` from the sidecar. The base driver fingerprints the matched files, so a changed corpus is read again
and an unchanged one is cached.

Every selected task must share one candidate set (tasks 1-5 do; task 6 has its own and runs as its own pipeline).
The candidates and KB facts are written into the Examples artifact (see ``corpus_resources``); ``answer_index`` is
the gold answer's position in that candidate set, -1 when it is not a candidate (the curated schema rejects it).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from typing import Any

import apache_beam as beam
from tfx.components.example_gen.base_example_gen_executor import BaseExampleGenExecutor
from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.corpus_resources import CorpusResources, write_resources
from data import babi_format
from data.banking.labels import SPLIT_FEATURE, read_labels, turn_challenge
from data.facts import corpus_facts
from data.layout import TaskFiles, discover_names, task_labels_name
from models.examples import DialogId, dialog_examples, task_label
from models.tf_examples import NO_CHALLENGE, NOT_A_CANDIDATE, to_tf_example

# TFX split name -> the dialog-bAbI splits it holds. ``eval`` holds ``dev-OOP`` beside ``dev``: the banking choices
# (the state ranker's epoch) and reports read the development challenge sets; the ``split`` feature tells them apart,
# and only ``dev`` blesses.
SPLIT_FILES: dict[str, str] = {"train": "trn", "eval": "dev*", "test": "tst*"}


def split_pattern(tasks: Sequence[int], split: str) -> str:
    """The file pattern of a TFX split for the given tasks (all tasks when empty)."""
    selector = "[" + "".join(str(t) for t in sorted(tasks)) + "]" if tasks else "*"
    return f"dialog-babi-task{selector}-*-{SPLIT_FILES[split]}.txt"


def input_config(tasks: Sequence[int], splits: Sequence[str] = tuple(SPLIT_FILES)) -> example_gen_pb2.Input:
    """File patterns of the TFX splits (default all three) for the given tasks (all tasks when empty)."""
    return example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name=name, pattern=split_pattern(tasks, name))
                                         for name in splits])


def corpus_splits(input_base: str, tasks: Sequence[int] = ()) -> tuple[str, ...]:
    """The TFX splits a corpus has files for: ``train`` and ``eval`` are needed; ``test`` is left out when the
    corpus has no test file (the public task 6 release holds back its test set)."""
    found = tuple(split for split in SPLIT_FILES
                  if fileio.glob(posixpath.join(input_base, split_pattern(tasks, split))))
    missing = [f"{split_pattern(tasks, split)} ({split})" for split in ("train", "eval") if split not in found]
    if missing:
        raise FileNotFoundError(f"{input_base}: no file matches {' or '.join(missing)}; the pipeline trains on trn "
                                "and selects on dev")
    return found


def _labels_path(input_base: str, entry: TaskFiles) -> str:
    return posixpath.join(input_base, task_labels_name(entry.task, entry.name))


def _read_text(path: str) -> str:
    return babi_format.read_text(path, fileio)


def _corpus_tasks(input_base: str) -> dict[int, TaskFiles]:
    return discover_names(name.rstrip("/") for name in fileio.listdir(input_base))


def _matched_files(input_base: str, pattern: str) -> list[str]:
    files = sorted(fileio.glob(posixpath.join(input_base, pattern)))
    if not files:
        raise FileNotFoundError(f"no file of {input_base} matches {pattern}")
    return files


def _task_of(tasks: dict[int, TaskFiles], path: str) -> tuple[TaskFiles, str]:
    name = posixpath.basename(path)
    for entry in tasks.values():
        for split, split_name in entry.splits.items():
            if str(split_name) == name:
                return entry, split
    raise ValueError(f"{path}: not a dialog file of the dialog-bAbI layout")


def _candidates_path(input_base: str, entry: TaskFiles) -> str:
    if entry.candidates is None:
        raise FileNotFoundError(f"{input_base}: task {entry.task} has no candidates file")
    return posixpath.join(input_base, str(entry.candidates))


def _read_candidates(path: str) -> tuple[str, ...]:
    return tuple(babi_format.parse_candidates(_read_text(path), path).candidates)


def _file_examples(path: str, task: int, split: str, candidates: dict[str, int],
                   labels: dict[int, dict] | None = None) -> Iterator[bytes]:
    """tf.Examples of one dialog file; ``labels`` (dialog index -> sidecar label) give the banking challenge."""
    label = task_label(task)
    split_feature = SPLIT_FEATURE.get(split, split) if labels is not None else split
    for index, dialog in enumerate(babi_format.parse_dialogs(_read_text(path), path)):
        if labels is not None and index not in labels:
            raise ValueError(f"{path}: dialog {index} has no line in the labels sidecar")
        for example in dialog_examples(dialog, str(DialogId(label, split, index)), label, split_feature):
            answer = candidates.get(example.answer, NOT_A_CANDIDATE)
            challenge = turn_challenge(labels[index], example.turn) if labels is not None else NO_CHALLENGE
            yield to_tf_example(example, answer, challenge).SerializeToString()


def _job_examples(job: tuple[str, int, str, str, dict[int, dict] | None]) -> Iterator[bytes]:
    """The tf.Examples of one job (dialog file, task, split, candidates file, labels), the candidate index read
    where the job runs: a closure over every task's index was pickled again for each bundle (by dill), work
    repeated for nothing."""
    path, task, split, candidates, labels = job
    yield from _file_examples(path, task, split, {c: i for i, c in enumerate(_read_candidates(candidates))}, labels)


def _labels(input_base: str, entry: TaskFiles) -> dict[str, dict[int, dict]] | None:
    """A task's sidecar labels, by file split and dialog index (None for corpora without a sidecar)."""
    path = _labels_path(input_base, entry)
    if not fileio.exists(path):
        return None
    by_split: dict[str, dict[int, dict]] = {}
    for label in read_labels(path, _read_text(path)):
        by_split.setdefault(label["split"], {})[label["dialog"]] = label
    return by_split


@beam.ptransform_fn
@beam.typehints.with_input_types(beam.Pipeline)
@beam.typehints.with_output_types(bytes)
def _DialogFilesToExamples(pipeline: beam.Pipeline, exec_properties: dict[str, Any],  # noqa: N802 (Beam style)
                           split_pattern: str) -> beam.pvalue.PCollection:
    input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
    tasks = _corpus_tasks(input_base)
    jobs = []
    sidecars: dict[int, dict[str, dict[int, dict]] | None] = {}  # each task's sidecar, read once
    for path in _matched_files(input_base, split_pattern):
        entry, split = _task_of(tasks, path)
        if entry.task not in sidecars:
            sidecars[entry.task] = _labels(input_base, entry)
        labels = sidecars[entry.task]
        jobs.append((path, entry.task, split, _candidates_path(input_base, entry),
                     None if labels is None else labels.get(split, {})))
    return (pipeline
            | "DialogFiles" >> beam.Create(jobs)
            | "Reshuffle" >> beam.Reshuffle()
            | "TurnExamples" >> beam.FlatMap(_job_examples))


def corpus_resources(input_base: str, patterns: Sequence[str]) -> CorpusResources:
    """Candidates and KB facts (KB file, and KB results of the training dialogs) of the tasks the patterns cover."""
    tasks = _corpus_tasks(input_base)
    selected = sorted({_task_of(tasks, path)[0].task for pattern in patterns
                       for path in _matched_files(input_base, pattern)})
    candidate_sets = {task: _read_candidates(_candidates_path(input_base, tasks[task])) for task in selected}
    first = candidate_sets[selected[0]]
    differing = [task for task in selected if candidate_sets[task] != first]
    if differing:
        raise ValueError(f"{input_base}: tasks {selected[0]} and {differing[0]} have different candidate sets; "
                         "one pipeline trains one model over one candidate set, so select tasks that share it "
                         "(e.g. tasks 1-5, or task 6 alone)")
    facts: list[tuple[str, str, str]] = []
    for task in selected:
        entry = tasks[task]
        remote = TaskFiles(entry.task, entry.name,  # paths as strings: pathlib would fold "gs://" into "gs:/"
                           {split: posixpath.join(input_base, str(name)) for split, name in entry.splits.items()},
                           None, posixpath.join(input_base, str(entry.kb)) if entry.kb else None)
        facts += corpus_facts(remote, read_text=_read_text)
    return CorpusResources(tuple(selected), first, tuple(dict.fromkeys(facts)))


class Executor(BaseExampleGenExecutor):
    """Writes the splits (base class) and then the corpus resources into the same Examples artifact."""

    def GetInputSourceToExamplePTransform(self) -> beam.PTransform:  # noqa: N802 (TFX API)
        return _DialogFilesToExamples

    def Do(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
           exec_properties: dict[str, Any]) -> None:
        config = example_gen_pb2.Input()
        proto_utils.json_to_proto(exec_properties[standard_component_specs.INPUT_CONFIG_KEY], config)
        resources = corpus_resources(exec_properties[standard_component_specs.INPUT_BASE_KEY],
                                     [split.pattern for split in config.splits])
        super().Do(input_dict, output_dict, exec_properties)
        examples = artifact_utils.get_single_instance(output_dict[standard_component_specs.EXAMPLES_KEY])
        write_resources(examples.uri, resources)


def DialogExampleGen(input_base: Any, tasks: Sequence[int] = (),  # noqa: N802 (component)
                     splits: Sequence[str] = tuple(SPLIT_FILES)) -> FileBasedExampleGen:
    """The component: ``input_base`` is a corpus directory (a path or a RuntimeParameter), ``tasks`` a selection,
    ``splits`` the TFX splits to write (see :func:`corpus_splits`)."""
    return FileBasedExampleGen(input_base=input_base, input_config=input_config(tasks, splits),
                               custom_executor_spec=executor_spec.BeamExecutorSpec(Executor))

