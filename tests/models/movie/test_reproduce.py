"""Table 6 run on a Movie Dialog corpus: every registered method, each scored per task on test; a directory in
neither layout is refused."""

from __future__ import annotations

import re

import pytest

from models.methods import Settings, get, names
from models.movie.methods import MovieTask, hits
from models.movie.paper import PAPER_TABLE6
from models.movie.reproduce import benchmark


def test_benchmark_writes_table6_for_a_movie_corpus(movies, tmp_path) -> None:
    """Every row but the per-task LSTM and embeddings (trained and tested in their own files): the rows chosen,
    in the table's order, and the others named as not run."""
    corpus, _, _ = movies
    out = tmp_path / "table6.md"
    lines: list[str] = []
    chosen = [name for name in names("movie") if name not in ("movie_lstm", "movie_embeddings")]
    written = benchmark(corpus.root, out, epochs=1, progress=lines.append, methods=chosen[::-1])
    assert written == [out, out.with_suffix(".csv")]
    text = out.read_text()
    titles = [title for title in PAPER_TABLE6 if title not in ("LSTM", "Supervised embeddings")]
    assert [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ")][2:] == \
        [f"| {title}" for title in titles]
    assert [line.split(":")[0] for line in lines] == titles
    assert "| QA system | **" in text and "paper 90.7" in text and "- Not run: LSTM, Supervised embeddings." in text
    assert re.search(r"\| SVD \| n/a \| \*\*[\d.]+\*\* · paper 19.2 \| n/a \| n/a \|", text)
    assert re.search(r"\| IR \| n/a \| n/a \| n/a \| \*\*[\d.]+\*\* · paper 23.7 \|", text)
    assert "Joint MemN2N against MemN2N trained per task: task 1 " in text
    assert "MemN2N task 4: 1 hop(s)" in text  # the discussion task, ranked among its candidate file
    assert re.search(r"MemN2N task 1: 1 hop\(s\), best epoch 1/1,", text)  # epochs reaches the models (8 without)
    assert "| MemN2N | **" in text and "MemN2N task 3: 2 hop(s)" in text and "by exchange: exchange 1 " in text
    assert re.search(r"- IR input: .* \(chosen on dev\); test hits@10 with the query alone [\d.]+, with the history "
                     r"[\d.]+ \(the paper's Table 10 comparison\)", text)


def test_tasks_pick_the_columns_and_the_others_say_not_run(movies, tmp_path) -> None:
    """A paper-scale table is run a few cells at a time: the columns not asked for are "not run", not n/a (the
    method has nothing to offer there); a task the corpus lacks is refused before any work."""
    corpus, _, _ = movies
    out = tmp_path / "table6.md"
    benchmark(corpus.root, out, progress=lambda _: None, methods=["movie_qa", "movie_svd"], tasks=(1,))
    text = out.read_text()
    assert re.search(r"\| QA system \| \*\*[\d.]+\*\* · paper 90.7 \| not run \| not run \| not run \|", text)
    assert "| SVD | n/a | not run · paper 19.2 | not run | not run |" in text
    with pytest.raises(FileNotFoundError, match="has no files of task 5"):
        benchmark(corpus.root, out, progress=lambda _: None, methods=["movie_qa"], tasks=(1, 5))


def test_a_directory_without_a_task_file_is_refused(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no Movie Dialog task file"):
        benchmark(tmp_path, tmp_path / "table6.md")


def test_a_streamed_row_ranks_through_its_saved_model_as_its_trainer_chose(data, tmp_path) -> None:
    """The streamed trainer from the corpus files: its SavedModel, ranking the dev examples (QA among the entities,
    the discussion among dev's candidate file), gives the dev hits@k its trainer chose the epoch on (in the graph,
    from the tf.Examples it wrote): records, export and ranking agree."""
    fitted = get("movie_joint_memn2n", "movie").fit(MovieTask(data, (1, 4), streamed=True), tmp_path,
                                                    Settings(epochs=1))
    assert "one model on tasks 1, 4, streamed trainer (2 hop(s), 3 dictionaries" in fitted.note
    chosen = fitted.summary["dev_hits"]
    assert sorted(chosen) == ["movie-qa", "movie-reddit"] and max(chosen.values()) > 0
    assert hits(fitted, data, 1, "dev")[0] == pytest.approx(chosen["movie-qa"], abs=0.01)
    assert hits(fitted, data, 4, "dev")[0] == pytest.approx(chosen["movie-reddit"], abs=0.01)
