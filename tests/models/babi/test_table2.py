"""`dialog benchmark` writes Table 2 beside the paper's figures, as Markdown and CSV."""

from __future__ import annotations

import csv
import re
import shutil
from collections import Counter
from pathlib import Path

from data import babi_format
from data.babi.generation import GenerationPlan, generate
from models.babi.table2 import METHOD_TITLES, METHODS, run_benchmark
from tests import FIXTURES


def test_every_method_has_a_column_title() -> None:
    assert set(METHODS) == set(METHOD_TITLES)


def test_benchmark_writes_table2(tmp_path: Path) -> None:
    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=2, dialogs_per_split=10, tasks=(2, 4)), data, runner="local")
    for path in (FIXTURES / "task6-like").iterdir():  # task 6 has no OOV test set and no rule-based system yet
        shutil.copy(path, data / path.name)
    out = tmp_path / "results.md"
    cells = run_benchmark(data, out, methods=["rule_based", "nearest_neighbour"], progress=lambda line: None)
    assert len(cells) == 2 * (2 + 2 + 1)  # methods x (T2, T2 OOV, T4, T4 OOV, T6)
    table = out.read_text()
    assert "| T2 | **100.0** (100.0) · paper 100 (100) |" in table
    assert "| T4 (OOV) |" in table
    assert re.search(r"\| T6 \| \*\*[0-9.]+\*\* \([0-9.]+\) · paper 33.3 \(0\) \|", table)  # the task-6 rules
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert {(r["row"], r["method"]) for r in rows} >= {("T2", "rule_based"), ("T4 (OOV)", "nearest_neighbour")}
    assert [r["paper_per_response"] for r in rows if r["row"] == "T6" and r["method"] == "rule_based"] == ["33.3"]


def test_each_file_is_read_once_whatever_the_methods(tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=3, dialogs_per_split=5, tasks=(1,)), data, runner="local")
    for path in (FIXTURES / "task6-like").iterdir():  # task 6: six rule-based variants chosen on dev
        shutil.copy(path, data / path.name)
    reads: Counter[str] = Counter()
    read_dialogs, read_candidates = babi_format.read_dialogs, babi_format.read_candidates
    monkeypatch.setattr(babi_format, "read_dialogs", lambda path: reads.update([Path(path).name]) or read_dialogs(path))
    monkeypatch.setattr(babi_format, "read_candidates",
                        lambda path: reads.update([Path(path).name]) or read_candidates(path))
    run_benchmark(data, tmp_path / "results.md", methods=["rule_based", "tfidf_type", "nearest_neighbour"],
                  progress=lambda line: None)
    assert "dialog-babi-task1-API-calls-trn.txt" in reads and "dialog-babi-task6-dstc2-trn.txt" in reads
    assert {name: count for name, count in reads.items() if count != 1} == {}


def _memn2n_rows_trained(tmp_path: Path, monkeypatch, tasks: tuple[int, ...], scores: dict[float, tuple[float, float]]
                         ) -> tuple[list, str, str]:
    """Run the MemN2N row's fit with `train` scripted: each learning rate's (dev, OOV dev) accuracy."""
    import models.babi.table2 as table2
    from data.layout import discover
    from models.examples import TaskData

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=4, dialogs_per_split=5, tasks=tasks), data, runner="local")
    trained = []

    def scripted_train(task, config, out, oov_dev):
        assert oov_dev, "the row hands each config the OOV dev set it made once"
        trained.append(config)
        dev, oov = scores[config.learning_rate]
        summary = {"best_epoch": 1, "dev_per_response_accuracy": dev, "train_seconds": 1.0}
        return summary | ({"oov_dev_per_response_accuracy": oov} if config.select_on_oov_dev and oov is not None
                          else {})

    monkeypatch.setattr(table2, "train", scripted_train)
    monkeypatch.setattr(table2, "SavedModelRanker", lambda directory: directory)
    fitted = METHODS["memn2n_match"](TaskData.load(discover(data)[tasks[0]]), tmp_path / "work", 30)
    return trained, str(fitted.ranker), fitted.note


def test_a_memn2n_row_keeps_the_step_better_on_dev_and_the_oov_dev_set(tmp_path: Path, monkeypatch) -> None:
    # dev alone would keep the defaults (100 against 99.5); the OOV dev set turns it
    trained, chosen, note = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {0.005: (100.0, 92.0),
                                                                               0.001: (99.5, 96.5)})
    assert [(c.learning_rate, c.batch_size, c.epochs) for c in trained] == [(0.005, 128, 30), (0.001, 32, 12)]
    assert all(c.select_on_oov_dev and c.only_learned_words and c.per_occurrence_gradient and c.match_type
               for c in trained)
    assert chosen.endswith("task1-memn2n_match-step1") and "Adam 0.001 in batches of 32" in note


def test_a_memn2n_row_keeps_the_defaults_on_a_tie(tmp_path: Path, monkeypatch) -> None:
    _, chosen, note = _memn2n_rows_trained(tmp_path, monkeypatch, (1,), {0.005: (100.0, 94.0), 0.001: (98.0, 96.0)})
    assert chosen.endswith("task1-memn2n_match") and "Adam 0.005 in batches of 128" in note
