"""Tables 8-9 on a small banking corpus: both tables written, every cell a percentage, the OOP average the mean of
the OOP rows, turns counted, the notes of both methods; written only when the banking task is asked for."""

from __future__ import annotations

from pathlib import Path

from data.banking.generation import plan_of
from data.banking.labels import CHALLENGES
from models.banking import reproduce
from models.banking.labelled import read_task_labels
from models.banking.reproduce import output_path, run_banking_benchmark
from models.examples import TaskData


def test_benchmark_writes_tables_8_and_9(banking, tmp_path: Path) -> None:
    """In two worker processes (`dialog benchmark`'s default on two cores), which start the state ranker first and
    print each note as its fit ends: the notes and columns still come in the methods' order."""
    _, files = banking
    printed: list[str] = []
    results = run_banking_benchmark(files, tmp_path / "banking.md", epochs=1, progress=printed.append, jobs=2)
    assert sorted(printed) == sorted(results.notes)
    text = (tmp_path / "banking.md").read_text()
    assert "Table 8" in text and "Table 9" in text and "| Turn Comp. OOT |" in text
    for templates in ("IT", "OOT"):
        for model in ("SMN", "MMN"):
            cells = [results.table8[(c, templates, model)] for c in CHALLENGES]
            assert all(0.0 <= value <= 100.0 for value in [*cells, results.table8[("none", templates, model)]])
            assert results.table8[("average", templates, model)] == round(sum(cells) / len(cells), 2)
    assert results.turns[("turn_compression", "IT", True)] >= 2 * 3  # twice per dialog, 3 dialogs
    assert (tmp_path / "banking.csv").read_text().startswith("table,test_case")
    smn, mmn, ours = results.notes
    assert smn.startswith("seed 1, SMN: best epoch 1/1 on dev (")
    assert ours.startswith("seed 1, Ours: best epoch 1/1 on dev and dev-OOP (")
    assert "slot types learned: account" in ours
    assert 0 <= results.table8[("average", "OOT", "Ours")] <= 100 and "| IT Ours |" in text
    assert mmn.startswith("seed 1, MMN: intent networks' best epochs 1, 1, 1, 1, 1, 1; selector (words (logistic "
                          "regression)) dev ")
    assert "dialogs routed to their intent: dev " in mmn and ", OOT " in mmn
    assert 0 <= results.table8[("routing", "OOT", "MMN")] <= 100
    # The development sets beside the tests: dev's non-OOP turns and each OOP case of dev-OOP, for every model.
    for model in ("SMN", "MMN", "Ours"):
        cells = [results.table8[(c, "dev", model)] for c in CHALLENGES]
        assert all(0.0 <= value <= 100.0 for value in [*cells, results.table8[("none", "dev", model)]])
        assert results.table8[("average", "dev", model)] == round(sum(cells) / len(cells), 2)
    assert results.turns[("turn_compression", "dev", True)] >= 2 * 3
    assert "The development sets (dev: non-OOP; dev-OOP:" in text and "| Turn Comp., twice |" in text
    assert f"- {mmn}" in text


def test_the_tables_go_beside_another_papers_table_when_the_corpus_holds_both(tmp_path: Path) -> None:
    assert output_path(tmp_path / "table.md", several=False) == tmp_path / "table.md"
    assert output_path(tmp_path / "table.md", several=True) == tmp_path / "table-banking.md"


def test_seeds_regenerate_the_corpus_and_average_the_cells(banking, tmp_path: Path, monkeypatch) -> None:
    """The loop over seeds without training: each corpus's seed read back, its cells averaged with their spread."""
    _, files = banking
    seen = []

    def fake_run(corpus, epochs, methods, directory, progress):
        seed = plan_of(read_task_labels(corpus)).seed
        seen.append((seed, len(TaskData.load(corpus).split("trn"))))
        cell = 10.0 * seed
        return ({("none", "IT", "SMN"): cell, ("average", "IT", "SMN"): None}, {}, {("none", "IT", False): seed},
                {"SMN": 1.0}, [f"seed {seed}"])

    monkeypatch.setattr(reproduce, "_run_seed", fake_run)
    results = run_banking_benchmark(files, tmp_path / "banking.md", seeds=3, progress=lambda _: None)
    assert [seed for seed, _ in seen] == [1, 2, 3] and len({n for _, n in seen}) > 1  # three different corpora
    assert results.table8[("none", "IT", "SMN")] == 20.0 and results.spread8[("none", "IT", "SMN")] == 10.0
    assert results.table8[("average", "IT", "SMN")] is None and results.seconds == {"SMN": 3.0}
    assert results.notes == ["seed 1", "seed 2", "seed 3"] and results.seeds == 3
