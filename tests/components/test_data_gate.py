"""The data gate: anomalies and answers outside the candidates stop the run, and the drift measure is bounded."""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import tensorflow as tf
from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx.types import artifact_utils, standard_artifacts

from components import data_gate
from components.data_gate import blocking_problems, data_report, js_divergence
from models.examples import TurnExample
from models.features import tokenize
from models.tf_examples import LABEL_KEY, to_tf_example

SPLITS = ["train", "eval", "test"]


def test_js_divergence_bounds() -> None:
    same = Counter({"a": 2, "b": 1})
    assert js_divergence(same, same) == pytest.approx(0.0)
    assert js_divergence(Counter({"a": 1}), Counter({"b": 1})) == pytest.approx(1.0)


def test_gate_blocks_on_anomalies_and_answers_outside_candidates() -> None:
    report = {"anomalies": {"train": [], "test": ["answer_index: out of range"]},
              "answers_not_in_candidates": {"train": 2, "test": 0}}
    problems = blocking_problems(report, ["train", "eval", "test"])
    assert problems == ["split test: answer_index: out of range",
                        "split train: 2 gold answers are not in the candidate set"]
    assert blocking_problems(report, ["eval"]) == []


def test_answers_outside_candidates_block_only_the_splits_in_both_lists() -> None:
    """Movie Dialog's task 4 trains on replies outside its evaluation candidates: train is not checked for them."""
    report = {"anomalies": {"train": ["query: missing"], "eval": [], "test": []},
              "answers_not_in_candidates": {"train": 5, "eval": 1, "test": 3}}
    problems = blocking_problems(report, ["train", "test"], candidate_check_splits=["eval", "test"])
    assert problems == ["split train: query: missing",  # anomalies still block training
                        "split test: 3 gold answers are not in the candidate set"]  # eval: not a blocking split
    assert blocking_problems(report, ["test"], candidate_check_splits=["train"]) == []
    assert blocking_problems(report, SPLITS, candidate_check_splits=[]) == ["split train: query: missing"]


def _examples() -> list[list[tf.train.Example]]:
    """A small corpus per TFX split: several dialog-bAbI split names, words training never saw (with tied counts,
    more than ten of them), gold answers outside the candidates, and an example without the optional features."""
    def turn(split: str, query: str, answer: str, index: int = 0) -> tf.train.Example:
        return to_tf_example(TurnExample("d", "1", split, 0, (), (), query, answer), index)

    bare = tf.train.Example()
    bare.features.feature["query"].bytes_list.value.append(b"hello there zebra")
    train = [turn("trn", f"hello i want food number {i}", "what cuisine", -1 if i % 4 == 0 else 1)
             for i in range(9)] + [turn("trn-extra", "book a table", "api_call italian rome", 2)]
    eval_ = [turn("dev", "i want italian food", "what cuisine", 0), turn("dev", "HELLO Rome", "ok", -1)]
    unseen = " ".join(f"w{k}" for k in range(14))
    test = [turn("tst", "hello i want thai food", "what cuisine", 3), turn("tst-OOV", unseen, "w3 w5 w5", -1),
            turn("tst", "thai thai please", "sure", 0), bare, turn("tst-OOV", "w1 w2 w13", "w9", 1)]
    return [train, eval_, test]


def _artifacts(root: Path) -> tuple[Any, Any]:
    examples = standard_artifacts.Examples()
    examples.uri = str(root / "examples")
    examples.split_names = artifact_utils.encode_split_names(SPLITS)
    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = str(root / "anomalies")
    anomalies.split_names = artifact_utils.encode_split_names(SPLITS)
    for split, records in zip(SPLITS, _examples(), strict=True):
        directory = Path(artifact_utils.get_split_uri([examples], split))
        directory.mkdir(parents=True)
        for part, chunk in enumerate((records[:4], records[4:])):  # two files, read in order
            with tf.io.TFRecordWriter(str(directory / f"data_tfrecord-{part:05d}-of-00002.gz"),
                                      options="GZIP") as writer:
                for record in chunk:
                    writer.write(record.SerializeToString())
        proto = anomalies_pb2.Anomalies()
        if split == "test":
            proto.anomaly_info["answer_index"].description = "out of range"
        directory = Path(artifact_utils.get_split_uri([anomalies], split))
        directory.mkdir(parents=True)
        (directory / data_gate.ANOMALIES_FILE).write_bytes(proto.SerializeToString())
    return anomalies, examples


def _report_from_rows(anomalies: Any, examples: Any) -> dict[str, Any]:
    """The report as it was computed before it streamed: every example of every split held as a row."""
    spec = {key: tf.io.FixedLenFeature([], tf.string, default_value="") for key in ("split", "query", "answer")}
    spec[LABEL_KEY] = tf.io.FixedLenFeature([], tf.int64, default_value=-1)
    splits = artifact_utils.decode_split_names(examples.split_names)
    rows: dict[str, list[tuple[str, str, str, int]]] = {}
    for split in splits:
        files = sorted(tf.io.gfile.glob(posixpath.join(artifact_utils.get_split_uri([examples], split), "*")))
        rows[split] = []
        for batch in tf.data.TFRecordDataset(files, compression_type="GZIP").batch(4096).map(
                lambda records: tf.io.parse_example(records, spec)):
            columns = (batch["split"].numpy(), batch["query"].numpy(), batch["answer"].numpy(),
                       batch[LABEL_KEY].numpy())
            rows[split] += [(s.decode(), q.decode(), a.decode(), int(i)) for s, q, a, i in zip(*columns, strict=True)]

    def word_counts(some: list[tuple[str, str, str, int]]) -> Counter:
        return Counter(word for _, query, answer, _ in some for word in tokenize(query) + tokenize(answer))

    train_words = word_counts(rows.get("train", []))
    drift: dict[str, dict[str, Any]] = {}
    for split in splits:
        for name in [] if split == "train" else sorted({row[0] for row in rows[split]}):
            counts = word_counts([row for row in rows[split] if row[0] == name])
            unseen = Counter({word: n for word, n in counts.items() if word not in train_words})
            total = sum(counts.values())
            drift[name] = {"words": total, "distinct_words": len(counts),
                           "unseen_word_rate": round(sum(unseen.values()) / total, 4) if total else 0.0,
                           "unseen_distinct_words": len(unseen),
                           "top_unseen_words": [word for word, _ in unseen.most_common(10)],
                           "js_divergence_from_train": round(js_divergence(train_words, counts), 4)}
    return {"anomalies": data_gate.split_anomalies(anomalies),
            "answers_not_in_candidates": {split: sum(1 for row in rows[split] if row[3] < 0) for split in splits},
            "vocabulary_drift": drift}


def test_the_streamed_report_is_the_one_computed_from_every_row(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    anomalies, examples = _artifacts(tmp_path)
    monkeypatch.setattr(data_gate, "BATCH_SIZE", 3)  # batches cross files and split names
    streamed = data_report(anomalies, examples)
    assert json.dumps(streamed, indent=1) == json.dumps(_report_from_rows(anomalies, examples), indent=1)
    assert streamed["answers_not_in_candidates"] == {"train": 3, "eval": 1, "test": 2}  # the bare one counts
    assert list(streamed["vocabulary_drift"]) == ["dev", "", "tst", "tst-OOV"]
    assert streamed["anomalies"]["test"] == ["answer_index: out of range"]
    assert len(streamed["vocabulary_drift"]["tst-OOV"]["top_unseen_words"]) == 10
