"""Choosing on folds of trn: every training dialog held out exactly once, never trained on by the run that reports
it, its KB results unknown to that run; the benchmark's task-6 rows and accuracy by answer kind."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate
from data.corpus import Dialog, Turn
from data.facts import dialog_facts, kb_file_facts
from data.layout import discover
from models.babi.answer_kinds import KINDS, accuracy_by_kind, answer_kind, decisions_by_kind
from models.babi.folds import bot_runs, bot_styles, fold_runs, mean_and_spread
from models.babi.reproduce import run_benchmark
from models.examples import TaskData


@pytest.fixture(scope="module")
def task5(tmp_path_factory) -> TaskData:
    data = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=7, dialogs_per_split=12, tasks=(5,)), data, runner="local")
    return TaskData.load(discover(data)[5])


def _ids(task: TaskData, split: str) -> set[int]:
    return {id(dialog) for dialog in task.dialogs[split]}  # the runs hand on the dialogs read, not copies


def test_every_training_dialog_is_held_out_once_and_never_seen_by_its_run(task5) -> None:
    runs = fold_runs(task5, folds=4, seed=1)
    assert [run.name for run in runs] == ["fold 1/4", "fold 2/4", "fold 3/4", "fold 4/4", "final"]
    everything = _ids(task5, "trn")
    held_out: list[int] = []
    for run in runs[:-1]:
        trn, dev, tst = (_ids(run.task, split) for split in ("trn", "dev", "tst"))
        assert not (trn & dev or trn & tst or dev & tst) and trn | dev | tst == everything
        held_out += tst
        # The run knows the KB file's facts and its training dialogs' KB results, not the held-out dialogs'.
        assert run.task.facts == (*kb_file_facts(task5.files.kb), *dialog_facts(run.task.dialogs["trn"]))
        assert {e.split for e in run.task.split("tst")} == {"tst"} and len(run.task.split("tst")) > 0
    assert sorted(held_out) == sorted(everything)  # each dialog once
    final = runs[-1].task
    assert _ids(final, "dev") == _ids(runs[0].task, "tst") and _ids(final, "trn") == everything - _ids(final, "dev")
    assert set(final.examples) == {"trn", "dev"}
    assert [run.task.dialogs for run in fold_runs(task5, folds=4, seed=1)] == [run.task.dialogs for run in runs]
    with pytest.raises(ValueError, match="at least 3"):
        fold_runs(task5, folds=2)


def test_mean_and_spread() -> None:
    assert mean_and_spread([50.0, 60.0]) == (55.0, 7.07) and mean_and_spread([40.0]) == (40.0, 0.0)


@pytest.mark.parametrize(("answer", "kind"), [
    ("api_call italian west cheap", "api_call"), ("api_call R_cuisine south R_price", "api_call"),
    ("prezzo is a nice place in the west of town and the prices are moderate", "offer"),
    ("what do you think of this option: resto_rome_cheap_italian_8stars", "offer"),
    ("The phone number of prezzo is prezzo_phone", "contact"), ("Sure , prezzo is on prezzo_address", "contact"),
    ("here it is resto_rome_cheap_italian_8stars_address", "contact"),
    ("What kind of food would you like?", "slot_question"), ("how many people would be in your party", "slot_question"),
    ("Sorry would you like something in the cheap price range or you dont care", "slot_question"),
    ("You are looking for a italian restaurant right?", "confirmation"),
    ("I'm sorry but there is no restaurant serving greek food", "no_match"),
    ("prezzo serves italian food", "attribute"), ("The price range at prezzo is moderate .", "attribute"),
    ("Hello , welcome to the Cambridge restaurant system .", "greeting_goodbye"),
    (" you are welcome", "greeting_goodbye"), ("sure is there anything else to update", "other"),
    ("i'm on it", "other"),
])
def test_answer_kinds(answer: str, kind: str) -> None:
    assert answer_kind(answer) == kind and kind in KINDS


def test_accuracy_by_kind_counts_each_kinds_turns(task5) -> None:
    dev = task5.split("dev")
    predictions = [e.answer if answer_kind(e.answer) == "api_call" else "" for e in dev]
    by_kind = accuracy_by_kind(dev, predictions)
    assert by_kind["api_call"][0] == 100.0 and all(v[0] == 0.0 for k, v in by_kind.items() if k != "api_call")
    assert sum(turns for _, turns in by_kind.values()) == len(dev) and list(by_kind) == [k for k in KINDS
                                                                                         if k in by_kind]


def test_a_decision_is_the_answers_kind_however_worded(task5) -> None:
    """Every API call answered with another call (a wrong one) is its decision made; everything else answered
    with a greeting is none made, but the greetings'."""
    dev = task5.split("dev")
    predictions = ["api_call french paris four cheap" if answer_kind(e.answer) == "api_call" else "hello there"
                   for e in dev]
    decided = decisions_by_kind(dev, predictions)
    assert accuracy_by_kind(dev, predictions)["api_call"][0] < 100.0 == decided["api_call"][0]
    assert all(v[0] == (100.0 if k in ("api_call", "greeting_goodbye") else 0.0) for k, v in decided.items())
    assert {k: v[1] for k, v in decided.items()} == {k: v[1] for k, v in accuracy_by_kind(dev, predictions).items()}


def test_the_task6_row_is_chosen_on_folds_and_dev_reported_once(task5, tmp_path: Path) -> None:
    data = tmp_path / "corpus"  # a task 6 in the public layout (without a test file), from generated task-5 dialogs
    data.mkdir()
    shutil.copy(task5.files.candidates, data / "dialog-babi-task6-dstc2-candidates.txt")
    for split in ("trn", "dev"):
        shutil.copy(task5.files.splits[split], data / f"dialog-babi-task6-dstc2-{split}.txt")
    out = tmp_path / "t6.md"
    lines: list[str] = []
    cells = run_benchmark(data, out, methods=["nearest_neighbour"], folds=3, progress=lines.append)
    assert [(c.row, c.method) for c in cells] == [(row, "nearest_neighbour") for row in ("T6 (folds)", "T6 (dev)")]
    folds, dev = cells
    assert folds.spread is not None and dev.spread is None and "held-out folds" in folds.note
    assert sum(line.startswith("T6 Nearest neighbour fold ") for line in lines) == 3
    assert {kind for kind in folds.kinds} <= set(KINDS) and folds.kinds["api_call"][2] > 0
    assert sum(turns for _, _, turns in folds.kinds.values()) == len(task5.split("trn"))  # every turn held out once
    table = out.read_text()
    assert "| T6 (folds) | **" in table and "±" in table and "Rows marked (folds)" in table
    assert "Rows marked (dev): the corpus has no test file" not in table and "| T6 (dev) | turns |" in table
    rows = {r["row"]: r for r in csv.DictReader(out.with_suffix(".csv").open())}
    assert float(rows["T6 (folds)"]["per_response_spread"]) == folds.spread
    assert json.loads(rows["T6 (dev)"]["by_kind"]) == {k: v[0] for k, v in dev.kinds.items()}
    assert json.loads(rows["T6 (dev)"]["decided_by_kind"]) == {k: v[0] for k, v in dev.decided.items()}
    assert set(folds.decided) == set(folds.kinds) and all(
        folds.decided[k][0] >= folds.kinds[k][0] for k in folds.kinds)  # a right answer is a right decision
    assert "| T6 (folds) | Nearest neighbour: decision |" in table
    plain = run_benchmark(data, tmp_path / "plain.md", methods=["nearest_neighbour"], folds=0,
                          progress=lambda line: None)
    assert [c.row for c in plain] == ["T6 (dev)"] and "Rows marked (dev)" in (tmp_path / "plain.md").read_text()


def _bots(task: TaskData, bots: int) -> TaskData:
    """The task's training dialogs, twice over, said by ``bots`` bots in turn (dialog i by bot i % bots): other
    words for the same offer and the same wait (no other difference)."""
    wordings = [{}, {"what do you think of this option:": "how about", "i'm on it": "one moment please"},
                {"what do you think of this option:": "may i suggest", "i'm on it": "let me look into it"}]

    def said_by(dialog: Dialog, other: dict[str, str]) -> Dialog:
        def turn(line: Turn) -> Turn:
            bot = line.bot
            for words, instead in other.items():
                bot = bot.replace(words, instead)
            return replace(line, bot=bot)
        return replace(dialog, lines=tuple(turn(line) if isinstance(line, Turn) else line for line in dialog.lines))

    dialogs = task.dialogs["trn"] * 2
    return task.with_dialogs({"trn": [said_by(d, wordings[i % bots]) for i, d in enumerate(dialogs)],
                              "dev": task.dialogs["dev"]})


@pytest.mark.parametrize("bots", [2, 3])
def test_the_bots_wording_styles_are_told_apart_and_each_held_out_whole(task5, bots: int) -> None:
    task = _bots(task5, bots)
    styles = bot_styles(task, bots)
    # each bot is one style, whatever its number
    assert sorted(set(styles)) == list(range(1, bots + 1)) and styles == [styles[i % bots] for i in range(len(styles))]
    runs = bot_runs(task, seed=1, styles=bots)
    assert [run.name for run in runs] == [f"new bot {held}/{bots}" for held in range(1, bots + 1)]
    for held, run in enumerate(runs, start=1):
        trn, dev, tst = (_ids(run.task, split) for split in ("trn", "dev", "tst"))
        assert tst == {id(d) for d, style in zip(task.dialogs["trn"], styles, strict=True) if style == held}
        assert not (trn & dev or trn & tst or dev & tst) and trn | dev | tst == _ids(task, "trn") and dev


def test_one_bot_cannot_be_told_into_two_styles(task5) -> None:
    with pytest.raises(ValueError, match="wording styles"):
        bot_runs(task5)
