"""`dialog benchmark` runs Table 2 and writes it beside the paper's figures, as Markdown and CSV."""

from __future__ import annotations

import csv
import re
import shutil
from collections import Counter
from pathlib import Path

from data import babi_format
from data.babi.generation import GenerationPlan, generate
from models.babi.folds import fold_runs
from models.babi.reproduce import run_benchmark
from tests import FIXTURES


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


def test_the_ablations_reuse_the_template_model_they_ablate(tmp_path: Path, monkeypatch) -> None:
    """The template ranker and its ablations through the registry: one template model, shared by every method of
    the run; a task without entities (task 6 here has no KB) trains it too, its filler having nothing to choose
    between."""
    from models.babi.template.ranker import TemplateRanker

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=5, dialogs_per_split=6, tasks=(1,)), data, runner="local")
    for split in ("trn", "dev"):
        shutil.copy(data / f"dialog-babi-task1-API-calls-{split}.txt", data / f"dialog-babi-task6-dstc2-{split}.txt")
    shutil.copy(data / "dialog-babi-candidates.txt", data / "dialog-babi-task6-dstc2-candidates.txt")
    fitted = []
    fit = TemplateRanker.fit.__func__
    monkeypatch.setattr(TemplateRanker, "fit", classmethod(lambda cls, task, *a, **k: fitted.append(task.task)
                                                           or fit(cls, task, *a, **k)))
    methods = ["template_memn2n", "template_memn2n-no_rating_rank"]
    cells = run_benchmark(data, tmp_path / "t.md", methods=methods, tasks=(6,), epochs=1, folds=0,
                          progress=lambda line: None)
    assert fitted == [6]
    assert {(c.row, c.method) for c in cells if c.per_response is not None} == {
        ("T6 (dev)", method) for method in methods}


def test_every_method_of_a_run_sees_the_same_folds(tmp_path: Path, monkeypatch) -> None:
    """The fold runs are made once per task, so that the methods of a run (the ablations and the model they
    ablate) share each fold's task."""
    import models.babi.reproduce as reproduce

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=5, dialogs_per_split=6, tasks=(1,)), data, runner="local")
    for split in ("trn", "dev", "tst"):
        shutil.copy(data / f"dialog-babi-task1-API-calls-{split}.txt", data / f"dialog-babi-task6-dstc2-{split}.txt")
    shutil.copy(data / "dialog-babi-candidates.txt", data / "dialog-babi-task6-dstc2-candidates.txt")
    made = []
    monkeypatch.setattr(reproduce, "fold_runs", lambda task, folds: made.append(task.task)
                        or fold_runs(task, folds))
    lines: list[str] = []
    cells = run_benchmark(data, tmp_path / "t.md", methods=["nearest_neighbour", "tfidf"], tasks=(6,), folds=3,
                          progress=lines.append)
    assert made == [6] and {c.row for c in cells} == {"T6 (folds)", "T6 (dev)", "T6"}
    # six dialogs hold too few of a bot style to hold it out: said, and no (new bot) row
    assert any(line.startswith("T6: no (new bot) row: bot wording styles of") for line in lines)


def test_seeds_train_the_learning_methods_once_per_seed_and_the_others_once(tmp_path: Path) -> None:
    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=4, dialogs_per_split=6, tasks=(1,)), data, runner="local")
    lines: list[str] = []
    cells = run_benchmark(data, tmp_path / "t.md", methods=["rule_based", "embeddings"], epochs=1,
                          progress=lines.append, seeds=2)
    by_method = {(cell.row, cell.method): cell for cell in cells}
    learned, rules = by_method[("T1", "embeddings")], by_method[("T1", "rule_based")]
    per_seed = [float(found.group(1)) for line in lines if (found := re.search(r" seed \d: tst ([0-9.]+)", line))]
    assert len(per_seed) == 2 and rules.spread is None and "seed" not in rules.note
    # Each seed trains its own model: one epoch on six dialogs leaves them apart, and the cell is their mean.
    assert len(set(per_seed)) > 1 and learned.spread > 0
    assert abs(learned.per_response - sum(per_seed) / 2) < 0.01
    assert "mean over seeds 0-1" in learned.note


def test_a_corpus_that_holds_back_its_tests_is_reported_on_dev_and_the_oov_dev_set(tmp_path: Path) -> None:
    from models.babi.paper import PAPER_TABLE2

    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=6, dialogs_per_split=8, tasks=(1,)), data, runner="local")
    for held_back in data.glob("*-tst*.txt"):
        held_back.unlink()
    out = tmp_path / "t.md"
    cells = run_benchmark(data, out, methods=["nearest_neighbour"], progress=lambda line: None)
    assert [cell.row for cell in cells] == ["T1 (dev)", "T1 (OOV dev)"]
    dev, oov = cells
    # the OOV dev set swaps the KB entities training holds for unseen ones: the nearest training answer misses them
    assert oov.per_response < dev.per_response
    paper = PAPER_TABLE2["T1 (OOV)"]["nearest_neighbour"][0]
    assert f"| T1 (OOV dev) | **{oov.per_response:.1f}** ({oov.per_dialog:.1f}) · paper {paper:g}" in out.read_text()
    rows = {r["row"]: r for r in csv.DictReader(out.with_suffix(".csv").open())}
    assert float(rows["T1 (OOV dev)"]["paper_per_response"]) == paper


def test_jobs_give_the_table_of_one_process(tmp_path: Path) -> None:
    """Units run in two worker processes, longest first: the same cells, in the table's order, as in one."""
    data = tmp_path / "corpus"
    generate(GenerationPlan(seed=4, dialogs_per_split=6, tasks=(1, 2)), data, runner="local")
    methods = ["rule_based", "nearest_neighbour", "tfidf"]
    one = run_benchmark(data, tmp_path / "one.md", methods=methods, progress=lambda line: None)
    lines: list[str] = []
    two = run_benchmark(data, tmp_path / "two.md", methods=methods, progress=lines.append, jobs=2)
    assert [(c.row, c.method, c.per_response, c.per_dialog) for c in two] == \
        [(c.row, c.method, c.per_response, c.per_dialog) for c in one]
    assert len(lines) == len(two)  # each unit's lines printed by the parent
    assert (tmp_path / "two.csv").read_text().count("\n") == (tmp_path / "one.csv").read_text().count("\n")
