"""Table 6 as Markdown: ours beside the paper's, n/a where a method has nothing to offer, and the notes."""

from __future__ import annotations

from models.movie.examples import MovieExample
from models.movie.report import Row, by_exchange, format_table6


def test_each_row_puts_ours_beside_the_papers_and_the_notes_follow() -> None:
    rows = [Row("QA system", {1: 95.0}, 1.0, ["QA note"]),
            Row("MemN2N", {1: 80.0, 2: 30.0}, 2.0, ["MemN2N note"]),
            Row("Joint MemN2N", {1: 82.5, 2: 25.0}, 3.0, [])]
    lines = format_table6(rows).splitlines()
    assert lines[2] == "| Method | QA task | Recs task | QA+Recs task | Reddit task | seconds |"
    assert lines[4] == "| QA system | **95.0** · paper 90.7 | n/a | n/a | n/a | 1.0 |"
    assert lines[5] == ("| MemN2N | **80.0** · paper 79.3 | **30.0** · paper 28.6 | n/a · paper 81.7 "
                        "| n/a · paper 29.2 | 2.0 |")
    assert lines[8:] == ["- QA note", "- MemN2N note", "- Joint MemN2N against MemN2N trained per task: task 1 +2.5, "
                         "task 2 -5.0", "- Not run: SVD, IR, LSTM, Supervised embeddings, Joint supervised embeddings."]


def test_by_exchange_scores_each_position_in_the_dialog() -> None:
    examples = [MovieExample(3, "test", dialog, exchange, (), "q", ("a",)) for dialog in (0, 1) for exchange in (1, 2)]
    ranked = [["a"], ["b"], ["a"], ["a"]]
    assert by_exchange(examples, ranked, 1) == "exchange 1 100.0, exchange 2 50.0"


def test_a_paper_scale_table_is_assembled_cell_by_cell_from_the_runs_csvs(tmp_path, monkeypatch) -> None:
    """Each cell shows its newest run and lists every run of it; a cell no run has is "not run" (n/a where the paper
    has no figure); a file of other columns is refused by name."""
    import pytest

    from models import provenance
    from models.movie.report import assemble_table6, write_table6

    def run(name: str, when: str, rows: list[Row]) -> None:
        monkeypatch.setattr(provenance, "now", lambda: when)
        monkeypatch.setattr(provenance, "commit", lambda: f"c-{name}")
        write_table6(tmp_path / f"{name}.md", rows, streamed=True)

    run("first", "2026-11-01T10:00:00+00:00", [Row("MemN2N", {1: 50.0, 2: 9.0}, 5.0, ["m"],
                                                   {1: "best epoch 2/8", 2: "best epoch 3/8"})])
    run("second", "2026-11-02T10:00:00+00:00", [Row("MemN2N", {1: 60.0}, 7.0, ["m"], {1: "best epoch 4/30"})])
    text = assemble_table6([tmp_path / "second.csv", tmp_path / "first.csv"], "Title")
    lines = text.splitlines()
    assert lines[0] == "Title"
    assert "| QA system | not run · paper 90.7 | n/a | n/a | n/a |" in lines
    assert ("| MemN2N | **60.0** (1) · paper 79.3 | **9.0** (2) · paper 28.6 | not run · paper 81.7 | not run · "
            "paper 29.2 |") in lines
    runs = lines[lines.index("1. MemN2N, QA task:") + 1:lines.index("2. MemN2N, Recs task:")]
    assert runs == ["   - 60.0 on 2026-11-02T10:00:00+00:00 at c-second, at most 30 epochs, streamed trainer "
                    "(second.csv): best epoch 4/30",
                    "   - 50.0 on 2026-11-01T10:00:00+00:00 at c-first, at most 8 epochs, streamed trainer "
                    "(first.csv): best epoch 2/8"]
    (tmp_path / "other.csv").write_text("row,method\n")
    with pytest.raises(ValueError, match=r"other.csv: not a Table 6 CSV"):
        assemble_table6([tmp_path / "other.csv"], "Title")


def test_the_findings_and_the_summary_are_judged_from_the_newest_cells(tmp_path, monkeypatch) -> None:
    """A finding holds, partly holds or fails on the newest run of each cell it names; the summary keeps a row
    once every cell the paper has is run (n/a where it has none)."""
    from models import provenance
    from models.movie.findings import format_findings
    from models.movie.report import format_summary, write_table6

    monkeypatch.setattr(provenance, "commit", lambda: "c")
    monkeypatch.setattr(provenance, "now", lambda: "2026-11-01T00:00:00+00:00")
    write_table6(tmp_path / "a.md", [Row("IR", {4: 20.0}, 1.0, []), Row("MemN2N", {1: 60.0, 2: 9.0, 3: 60.0, 4: 80.0},
                                                                          1.0, []),
                                     Row("Supervised embeddings", {1: 40.0, 2: 8.0, 3: 30.0, 4: 70.0}, 1.0, []),
                                     Row("SVD", {2: 7.0}, 1.0, []),
                                     Row("Joint MemN2N", {1: 30.0, 2: 9.0, 3: 62.0, 4: 60.0}, 1.0, [])])
    monkeypatch.setattr(provenance, "now", lambda: "2026-11-02T00:00:00+00:00")
    write_table6(tmp_path / "b.md", [Row("IR", {4: 90.0}, 1.0, [])])  # newer: IR now above MemN2N
    pieces = [tmp_path / "a.csv", tmp_path / "b.csv"]
    verdicts = [line.rsplit("|", 2)[-2].strip() for line in format_findings(pieces).splitlines()[2:7]]
    assert verdicts == ["No (0 of 1 comparisons)", "Yes", "Yes", "Partly (2 of 4 comparisons)", "not run"]
    summary = format_summary(pieces, "tables/t.md").splitlines()
    assert "| IR | n/a | n/a | n/a | 90.0 (23.7) |" in summary and "| SVD | n/a | 7.0 (19.2) | n/a | n/a |" in summary
    assert not any(line.startswith("| QA system") or line.startswith("| LSTM") for line in summary)


def test_a_pipeline_runs_joint_rows_are_a_piece_of_the_table(tmp_path) -> None:
    """The JSON line of a Movie Dialog pipeline run -> Table 6's joint rows: each task's test slice at the paper's
    k (hits@1 is TFMA's per-response accuracy), read back as cells of the assembled table."""
    import json

    from models.movie.records import TASK_NAMES
    from models.movie.report import main, newest_cells

    def slices(base: float) -> dict:
        return {f"split=test,task={name}": {"per_response_accuracy": base + task, "hits_at_10": base + 10 + task,
                                              "hits_at_100": base + 20 + task} for task, name in TASK_NAMES.items()}

    run = tmp_path / "run.json"
    run.write_text("noise\n" + json.dumps({"models": {"memn2n": {"slices": slices(30)},
                                                      "embeddings": {"slices": slices(50)}},
                                           "component_seconds": {"MemN2NTrainer": 12.5}}) + "\n")
    piece = tmp_path / "pipeline-joint.csv"
    main([str(piece), "--joint-from", str(run), "--record", "runs/x.md"])
    cells = newest_cells([piece])
    assert {key: float(cell["hits"]) for key, cell in cells.items()} == {
        ("Joint MemN2N", 1): 31.0, ("Joint MemN2N", 2): 52.0, ("Joint MemN2N", 3): 43.0, ("Joint MemN2N", 4): 44.0,
        ("Joint supervised embeddings", 1): 51.0, ("Joint supervised embeddings", 2): 72.0,
        ("Joint supervised embeddings", 3): 63.0, ("Joint supervised embeddings", 4): 64.0}
    assert cells[("Joint MemN2N", 1)]["seconds"] == "12.5" and "runs/x.md" in cells[("Joint MemN2N", 4)]["note"]
    assert "1 hop(s), 2 dictionaries" in cells[("Joint MemN2N", 1)]["note"]  # the product's shape, not the paper's
