"""DialogDataGate: stop the run on bad data, and report vocabulary drift between training and test splits.

ExampleValidator only records anomalies (it fails no run); this component reads them and raises when a blocking split
has any, so that nothing downstream (the Trainers depend on it) runs on bad data. It also checks what TFDV cannot
see in free text: every gold answer is a candidate (``answer_index`` >= 0; blocking only for the splits that are
also in ``candidate_check_splits``: Movie Dialog's task 4 trains on replies outside its evaluation candidates), and,
per dialog-bAbI split of the test data (``tst``, ``tst-OOV``, ...), how many of its words training never saw and
the Jensen-Shannon divergence of its word distribution from training's. Each TFX split is read once, streamed: the
report holds word counts, never the examples. The report is a JSON file in the output artifact.
"""

import json
import math
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf
from absl import logging
from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.io import fileio
from tfx.types import artifact, artifact_utils, standard_artifacts

from data.atomic import write_text_atomic
from models.features import tokenize
from models.gfile import GFILE
from models.tf_examples import LABEL_KEY

REPORT_FILE = "data_report.json"
ANOMALIES_FILE = "SchemaDiff.pb"
BATCH_SIZE = 4096  # examples parsed at a time; the report holds word counts, never the examples


class DialogDataReport(artifact.Artifact):
    """What the gate found: anomalies per split, answers outside the candidate set, vocabulary drift."""

    TYPE_NAME = "dialog.DataReport"  # KFP v2 wants "namespace.Name" titles for custom types


class DataGateError(RuntimeError):
    pass


def split_anomalies(anomalies: artifact.Artifact) -> dict[str, list[str]]:
    """``{split: ["feature: description", ...]}`` from an ExampleAnomalies artifact."""
    found: dict[str, list[str]] = {}
    for split in artifact_utils.decode_split_names(anomalies.split_names):
        path = posixpath.join(artifact_utils.get_split_uri([anomalies], split), ANOMALIES_FILE)
        with fileio.open(path, "rb") as handle:
            proto = anomalies_pb2.Anomalies.FromString(handle.read())
        found[split] = [f"{feature}: {info.description or info.short_description}"
                        for feature, info in sorted(proto.anomaly_info.items())]
        found[split] += [f"(dataset): {reason.description}" for reason in proto.dataset_anomaly_info.reason]
    return found


def text_batches(examples: artifact.Artifact, split: str) -> Iterator[tuple[np.ndarray, ...]]:
    """``(split feature, query, answer, answer_index)`` columns of one TFX split, ``BATCH_SIZE`` examples at a time."""
    pattern = posixpath.join(artifact_utils.get_split_uri([examples], split), "*")
    files = sorted(fileio.glob(pattern))
    spec = {key: tf.io.FixedLenFeature([], tf.string, default_value="") for key in ("split", "query", "answer")}
    spec[LABEL_KEY] = tf.io.FixedLenFeature([], tf.int64, default_value=-1)
    dataset = tf.data.TFRecordDataset(files, compression_type="GZIP").batch(BATCH_SIZE)
    for batch in dataset.map(lambda records: tf.io.parse_example(records, spec)):
        yield batch["split"].numpy(), batch["query"].numpy(), batch["answer"].numpy(), batch[LABEL_KEY].numpy()


def split_counts(examples: artifact.Artifact, split: str, by_name: bool = True) -> tuple[dict[str, Counter], int]:
    """One streamed pass over a TFX split: the word counts (queries and answers) of each ``split`` feature value, or
    of the whole split under ``""`` when not ``by_name``, and how many gold answers are not candidates
    (``answer_index`` < 0). Memory grows with the vocabulary, not with the number of examples."""
    words: dict[str, Counter] = defaultdict(Counter)
    not_candidates = 0
    for names, queries, answers, indexes in text_batches(examples, split):
        for name, query, answer in zip(names, queries, answers, strict=True):
            counts = words[name.decode() if by_name else ""]
            counts.update(tokenize(query.decode()))
            counts.update(tokenize(answer.decode()))
        not_candidates += int((indexes < 0).sum())
    return dict(words), not_candidates


def js_divergence(p: Counter, q: Counter) -> float:
    """Jensen-Shannon divergence (base 2, in [0, 1]) of two word-count distributions."""
    p_total, q_total = sum(p.values()) or 1, sum(q.values()) or 1
    divergence = 0.0
    for word in set(p) | set(q):
        pw, qw = p[word] / p_total, q[word] / q_total
        mw = (pw + qw) / 2
        divergence += (pw * math.log2(pw / mw) if pw else 0.0) + (qw * math.log2(qw / mw) if qw else 0.0)
    return divergence / 2


def data_report(anomalies: artifact.Artifact, examples: artifact.Artifact) -> dict[str, Any]:
    """Anomalies per split, answers outside the candidates per split, and each test-side ``split`` feature value's
    vocabulary drift from training; each TFX split is read once, streamed (training's first)."""
    splits = artifact_utils.decode_split_names(examples.split_names)
    not_candidates: dict[str, int] = dict.fromkeys(splits, 0)
    train_words: Counter = Counter()
    if "train" in splits:
        whole, not_candidates["train"] = split_counts(examples, "train", by_name=False)
        train_words = whole.get("", train_words)
    drift: dict[str, dict[str, Any]] = {}
    for split in splits:
        if split == "train":
            continue
        by_name, not_candidates[split] = split_counts(examples, split)
        for name in sorted(by_name):
            counts = by_name[name]
            unseen = Counter({word: n for word, n in counts.items() if word not in train_words})
            total = sum(counts.values())
            drift[name] = {"words": total, "distinct_words": len(counts),
                           "unseen_word_rate": round(sum(unseen.values()) / total, 4) if total else 0.0,
                           "unseen_distinct_words": len(unseen),
                           "top_unseen_words": [word for word, _ in unseen.most_common(10)],
                           "js_divergence_from_train": round(js_divergence(train_words, counts), 4)}
    return {"anomalies": split_anomalies(anomalies), "answers_not_in_candidates": not_candidates,
            "vocabulary_drift": drift}


def blocking_problems(report: dict[str, Any], blocking_splits: list[str], *,
                      candidate_check_splits: list[str] | None = None) -> list[str]:
    """Anomalies of ``blocking_splits``, and gold answers outside the candidate set of the splits in both
    ``blocking_splits`` and ``candidate_check_splits`` (all blocking splits when it is None)."""
    checked = blocking_splits if candidate_check_splits is None else candidate_check_splits
    problems = [f"split {split}: {anomaly}" for split in blocking_splits
                for anomaly in report["anomalies"].get(split, [])]
    problems += [f"split {split}: {count} gold answers are not in the candidate set"
                 for split, count in report["answers_not_in_candidates"].items()
                 if count and split in blocking_splits and split in checked]
    return problems


def _names(splits: str) -> list[str]:
    return [s.strip() for s in splits.split(",") if s.strip()]


@component
def DialogDataGate(  # noqa: N802 (TFX component)
    examples: InputArtifact[standard_artifacts.Examples],
    anomalies: InputArtifact[standard_artifacts.ExampleAnomalies],
    report: OutputArtifact[DialogDataReport],
    blocking_splits: Parameter[str] = "train,eval,test",
    candidate_check_splits: Parameter[str] = "train,eval,test",
) -> None:
    """Raises DataGateError when a blocking split has anomalies, or gold answers outside the candidate set and is
    also one of ``candidate_check_splits``; writes the data report either way."""
    found = data_report(anomalies, examples)
    path = posixpath.join(report.uri, REPORT_FILE)
    write_text_atomic(path, json.dumps(found, indent=1), GFILE)
    for name, figures in found["vocabulary_drift"].items():
        logging.info("vocabulary drift of %s from training: %s", name, figures)
    problems = blocking_problems(found, _names(blocking_splits),
                                 candidate_check_splits=_names(candidate_check_splits))
    if problems:
        raise DataGateError("the corpus failed validation, nothing downstream runs:\n  " + "\n  ".join(problems)
                            + f"\n(full report: {path})")
