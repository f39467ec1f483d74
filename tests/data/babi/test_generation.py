"""Writing a whole restaurant corpus: the layout, determinism, and the Beam path matching the local one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from data import sharded_files
from data.babi import generation as restaurant_generation
from data.babi.generation import GenerationPlan, generate
from data.babi_format import parse_dialogs
from data.layout import SHARED_CANDIDATES, SHARED_KB, dialog_file_name, discover
from data.validate import validate_corpus

PLAN = GenerationPlan(seed=3, dialogs_per_split=7)


def file_bytes(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.fixture(scope="module")
def local_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local")
    generate(PLAN, out, runner="local")
    return out


def test_corpus_has_the_public_layout_and_validates(local_corpus: Path) -> None:
    names = set(file_bytes(local_corpus))
    assert {SHARED_CANDIDATES, SHARED_KB} <= names
    assert len(names) == 22  # 5 tasks x 4 splits + candidates + KB
    tasks = discover(local_corpus)
    assert {task: sorted(files.splits) for task, files in tasks.items()} == {
        task: ["dev", "trn", "tst", "tst-OOV"] for task in range(1, 6)}
    report = validate_corpus(local_corpus)
    assert report.ok, report.format()
    assert report.dialogs == 5 * 4 * 7
    assert (local_corpus / SHARED_KB).read_text().count("\n") == 8400


def test_same_seed_same_bytes(local_corpus: Path, tmp_path: Path) -> None:
    generate(PLAN, tmp_path, runner="local")
    assert file_bytes(tmp_path) == file_bytes(local_corpus)


def results_per_dialog(path: Path) -> list[int]:
    return [len({line.fact[0] for line in dialog.kb_results}) for dialog in parse_dialogs(path.read_text())]


def test_task5_minimum_results_is_a_field_of_the_plan(local_corpus: Path, tmp_path: Path) -> None:
    """Three results at least by default (Table 1); the literal reading (one) gives fewer, and only task 5 moves."""
    assert GenerationPlan(seed=0).task5_min_results == 3
    literal = GenerationPlan(seed=PLAN.seed, dialogs_per_split=30, tasks=(4, 5), task5_min_results=1)
    generate(literal, tmp_path / "literal", runner="local")
    generate(dataclasses.replace(literal, task5_min_results=3), tmp_path / "table1", runner="local")
    counts = {reading: [n for split in PLAN.splits
                        for n in results_per_dialog(tmp_path / reading / dialog_file_name(5, split))]
              for reading in ("literal", "table1")}
    assert min(counts["table1"]) == 3
    assert min(counts["literal"]) == 1
    for split in PLAN.splits:
        name = dialog_file_name(4, split)
        assert (tmp_path / "literal" / name).read_bytes() == (tmp_path / "table1" / name).read_bytes()
    for bad in (0, 4):
        with pytest.raises(ValueError, match="task5_min_results must be 1-3"):
            GenerationPlan(seed=0, task5_min_results=bad)


@pytest.mark.parametrize("beam_args", [("--direct_running_mode=in_memory",), ()], ids=["in_memory", "default"])
def test_beam_path_writes_the_same_files_as_the_local_one(local_corpus: Path, tmp_path: Path, beam_args: tuple,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restaurant_generation, "SHARD_SIZE", 3)  # several shards per file, joined in order
    generate(PLAN, tmp_path, runner="beam", beam_args=beam_args)
    assert file_bytes(tmp_path) == file_bytes(local_corpus)  # no staging files left behind either


def test_auto_runner_picks_beam_for_large_corpora(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chosen = []
    monkeypatch.setattr(sharded_files, "write_beam", lambda shards, render, out, args: chosen.append("beam") or [])
    monkeypatch.setattr(sharded_files, "write_local", lambda shards, render, out: chosen.append("local") or [])
    generate(GenerationPlan(seed=0, dialogs_per_split=10), tmp_path)
    generate(GenerationPlan(seed=0, dialogs_per_split=100_000), tmp_path)
    assert chosen == ["local", "beam"]
    with pytest.raises(ValueError, match="runner"):
        generate(PLAN, tmp_path, runner="spark")
