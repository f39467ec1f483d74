"""Table 6's streamed rows: how the benchmark hands them the streamed trainer and one records directory, the task
files written once per table, and a SavedModel's ranking kept to each example's own candidates."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import tensorflow as tf

from data.movie.reader import discover_movie_corpus
from models.movie import methods as movie_methods
from models.movie import streamed_fit
from models.movie.examples import MovieData, MovieExample
from models.movie.records import MovieCandidates, Parser, movie_candidates
from models.movie.reproduce import benchmark
from models.movie.streamed_fit import StreamedRanker, write_split


class FirstEntity:
    def rank(self, examples, k=10):
        return [["nothing"] for _ in examples]


def test_the_streamed_rows_get_the_streamed_trainer_and_share_one_records_directory(movies, tmp_path,
                                                                                    monkeypatch) -> None:
    corpus, _, _ = movies
    calls = []

    def fake_fit(data, tasks, config, work_dir, records, model_dir):
        calls.append((tasks, config.encoder, config.hops, config.dictionaries, config.epochs, work_dir, records))
        return FirstEntity(), {"best_epoch": 1, "dev_hits": {}, "train_seconds": 0.0}

    monkeypatch.setattr(movie_methods, "fit_streamed", fake_fit)
    out = tmp_path / "table6.md"
    benchmark(corpus.root, out, epochs=2, progress=lambda _: None, tasks=(1, 4), streamed=True,
              methods=["movie_lstm", "movie_embeddings", "movie_memn2n", "movie_joint_memn2n"])
    memn2n = "memn2n"
    assert [c[:5] for c in calls] == [((1,), "lstm", 2, 3, 2), ((4,), "lstm", 2, 3, 2),
                                      ((1,), memn2n, 0, 2, 2), ((4,), memn2n, 0, 2, 2), ((1,), memn2n, 1, 2, 2),
                                      ((4,), memn2n, 1, 2, 2), ((1, 4), memn2n, 2, 3, 2)]
    shared = {c[6] for c in calls}
    assert len(shared) == 1 and None not in shared  # one directory for the table, outside every work directory
    assert all(not str(c[6]).startswith(str(c[5])) for c in calls)
    text = out.read_text()
    assert text.count("streamed trainer (") == 7 and "Joint MemN2N (2 hops" in text
    assert text.count("the last 2 messages and the query, up to 60 words") == 2
    calls.clear()  # a directory given (`dialog benchmark --records`) is the one every row uses, kept after
    benchmark(corpus.root, out, epochs=2, progress=lambda _: None, tasks=(1,), streamed=True,
              methods=["movie_memn2n"], records=tmp_path / "kept")
    assert [c[6] for c in calls] == [tmp_path / "kept"]


@pytest.fixture
def written(monkeypatch) -> list[str]:
    """The task files write_split writes (each still written), in order."""
    targets: list[str] = []
    real = streamed_fit.write_tfrecords
    monkeypatch.setattr(streamed_fit, "write_tfrecords", lambda target, records: targets.append(target) or
                        real(target, records))
    return targets


def test_a_task_file_is_written_once_per_records_directory(data, tmp_path, written) -> None:
    candidates = movie_candidates(data.corpus, data.entities)
    first = write_split(data, (1, 4), "dev", candidates, tmp_path)
    assert write_split(data, (1, 4), "dev", candidates, tmp_path) == first
    assert written == first and [p.name for p in sorted(tmp_path.iterdir())] == [
        "dev-task1.gz", "dev-task1.sources.json", "dev-task4.gz", "dev-task4.sources.json"]


def test_a_task_file_is_written_again_when_what_it_was_made_from_changed(movies, tmp_path, written) -> None:
    """A records directory shared by runs (``--records``) never serves the records of another corpus or of a file
    changed since: the task file, the entities and the candidate files are named in the stamp beside each."""
    shutil.copytree(movies[0].root, tmp_path / "corpus")
    data = MovieData(discover_movie_corpus(tmp_path / "corpus"))
    candidates, records = movie_candidates(data.corpus, data.entities), tmp_path / "records"
    (target,) = write_split(data, (1,), "dev", candidates, records)
    for changed in (Path(data.corpus.tasks[1]["dev"]), Path(data.corpus.entities)):
        os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 10**9))
        write_split(data, (1,), "dev", candidates, records)
    write_split(data, (1,), "dev", candidates, records)  # nothing changed since
    assert written == [target] * 3
    (records / "dev-task1.sources.json").unlink()  # a file of that name this trainer did not write
    before = Path(target).read_bytes()
    with pytest.raises(FileExistsError, match="dev-task1.gz was not written by the streamed trainer"):
        write_split(data, (1,), "dev", candidates, records)
    assert Path(target).read_bytes() == before and written == [target] * 3


def test_a_ranking_keeps_each_example_among_its_own_candidates() -> None:
    """A task-4 dev range of two candidates: the SavedModel's top 3 pads it with an entity, which is dropped; a
    k beyond what was exported is an error, not a silently shorter list."""
    candidates = MovieCandidates.of(["a", "b", "c", "d", "e"], {"dev": ["x", "y"]})
    ranker = StreamedRanker.__new__(StreamedRanker)
    ranker.entities, ranker.candidates = ["a", "b", "c", "d", "e"], candidates
    ranker._indices, ranker._parser = candidates.indices(), Parser(ranker.entities)
    ranker._serve = lambda examples: {"indices": tf.constant([[6, 0, 5]] * len(examples.numpy())),
                                      "responses": tf.constant([[b"y", b"a", b"x"]] * len(examples.numpy()))}
    reddit = MovieExample(4, "dev", 0, 1, (), "a query", ("x",))
    assert ranker.rank([reddit], k=10) == [["y", "x"]]
    qa = MovieExample(1, "dev", 0, 1, (), "a question", ("a",))
    assert ranker.rank([qa], k=3) == [["a"]]  # the entities' range: both task-4 replies dropped
    with pytest.raises(ValueError, match="hits@10 asked of a model exported with the top 3"):
        ranker.rank([qa], k=10)
