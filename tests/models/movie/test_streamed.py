"""The streamed joint MemN2N: trained from TFRecords of the tiny world, exported, answering raw text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from models.movie.records import MovieCandidates, Parser, movie_tf_examples
from models.movie.streamed import StreamedConfig, train_streamed


def write_records(data, split: str, path: Path, candidates: MovieCandidates) -> str:
    indices, parser = candidates.indices(), Parser(data.entities)
    with tf.io.TFRecordWriter(str(path), options="GZIP") as writer:
        for task in (1, 2, 3, 4):
            for example in movie_tf_examples(data.examples(task, split), candidates, indices, parser):
                writer.write(example.SerializeToString())
    return str(path)


@pytest.fixture(scope="module")
def trained(data, tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("streamed")
    candidates = MovieCandidates.of(data.entities, {s: data.candidates(s) for s in ("dev", "test")})
    train = write_records(data, "train", work / "train.gz", candidates)
    dev = write_records(data, "dev", work / "dev.gz", candidates)
    triples = [(t.subject, t.relation, t.value) for t in data.triples]
    config = StreamedConfig(epochs=3, batch_size=32, sampled=200, shuffle_buffer=1000)
    summary = train_streamed(data.entities, triples, candidates, [train], [dev], config, str(work / "model"))
    return summary, work / "model", candidates


def test_the_joint_model_learns_every_task_from_the_stream(trained) -> None:
    summary, _, _ = trained
    hits = summary["dev_hits"]
    assert set(hits) == {"movie-qa", "movie-recs", "movie-qarecs", "movie-reddit"}, hits
    # Far above chance (QA hits@1 among ~500 entities; discussion hits@10 among its ~100 candidates).
    assert hits["movie-qa"] > 20 and hits["movie-reddit"] > 30, summary["history"]


def test_the_exported_model_answers_a_raw_question(trained, data) -> None:
    summary, model_dir, candidates = trained
    serve = tf.saved_model.load(str(model_dir)).signatures["serving_default"]
    qa = [e for e in data.examples(1, "dev")][:40]
    out = serve(memory=tf.constant([[""]] * len(qa)), query=tf.constant([e.query for e in qa]))
    responses = out["responses"].numpy()
    right = np.mean([row[0].decode() in e.answers for e, row in zip(qa, responses, strict=True)])
    assert right * 100 >= summary["dev_hits"]["movie-qa"] - 15, (right, summary["dev_hits"])

