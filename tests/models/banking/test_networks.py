"""SMN and MMN's parts without training: the selector learns from the opening turns, and MMN routes each dialog
of plain turn examples from its opening turn, even when only later turns are ranked."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from data.banking.domain import INTENTS
from models.banking import networks
from models.banking.labelled import dialog_intents, read_task_labels
from models.banking.networks import (
    OPENING_TURN,
    SELECTOR_ACTION,
    MultipleMemoryNetwork,
    WordSelector,
    opening,
    selector_examples,
)
from models.examples import TaskData, TurnExample
from models.features import build_spec
from models.methods import best_answers
from models.metrics import accuracy_report
from models.training import TrainingDiverged, train_config


def test_the_selector_is_trained_on_each_dialogs_opening_turn(banking) -> None:
    _, files = banking
    task = TaskData.load(files)
    intents = dialog_intents(task, read_task_labels(files), ("trn",))
    selector = selector_examples(task.split("trn"), intents)
    assert len(selector) == 15 * 6
    assert all(e.turn == OPENING_TURN for e in selector)
    assert all(e.memory == () for e in selector)  # the utterance alone: the greeting tells no intent apart
    assert {e.answer for e in selector} == {SELECTOR_ACTION.format(intent=i) for i in INTENTS}


def test_a_later_turn_gives_back_its_dialogs_opening_turn(banking) -> None:
    _, files = banking
    task = TaskData.load(files)
    examples = [e for split in task.examples for e in task.split(split)]
    openings = {e.dialog_id: e for e in examples if e.turn == OPENING_TURN}
    for e in examples:
        assert opening(e) == (None if e.turn < OPENING_TURN else openings[e.dialog_id])


@dataclass
class Recorder:
    """A ranker answering ``answer`` to everything, recording what it was asked."""

    answer: str
    asked: list[TurnExample] = field(default_factory=list)

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        self.asked += examples
        return [[self.answer] for _ in examples]


class QuerySelector:
    """A selector choosing the intent named in the opening query; it refuses a memory (it reads the query alone)."""

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        assert all(e.memory == () for e in examples)
        return [[SELECTOR_ACTION.format(intent=e.query)] for e in examples]


def test_mmn_ranks_each_dialog_with_the_network_of_its_opening_turn() -> None:
    def dialog(name: str, intent: str, turns: int) -> list[TurnExample]:
        memory: list[str] = []
        examples = []
        for turn in range(turns):
            query = "<SILENCE>" if turn == 0 else intent if turn == OPENING_TURN else f"more {turn}"
            examples.append(TurnExample(name, "banking", "tst", turn, tuple(memory), ("user", "bot") * turn, query,
                                        f"bot {turn}"))
            memory += [query, f"bot {turn}"]
        return examples

    networks = {intent: Recorder(intent) for intent in INTENTS}
    mmn = MultipleMemoryNetwork(QuerySelector(), networks)
    cancel, block = dialog("a", "cancel_transfer", 4), dialog("b", "block_card", 3)
    examples = [*cancel, *block[2:]]  # dialog b without its greeting and opening turn
    assert mmn.route(examples) == {"a": "cancel_transfer", "b": "block_card"}
    assert mmn.rank(examples, 1) == [["cancel_transfer"]] * 4 + [["block_card"]]
    assert networks["cancel_transfer"].asked == cancel and networks["block_card"].asked == block[2:]
    # a dialog seen only at its greeting has nothing to route by: every network answers it alike
    assert mmn.rank(block[:1], 1) == [[INTENTS[0]]]


def test_a_diverging_selector_rate_is_left_out_and_named(banking, tmp_path, monkeypatch) -> None:
    """Without training: the fits are recorded; the selector at the first rate diverges, the second is chosen,
    and when both diverge the error stands."""

    _, files = banking
    task = TaskData.load(files)
    intents = dialog_intents(task, read_task_labels(files), ("trn", "dev"))
    failing = {0.001}

    def fake_fit(spec, trn, dev, config, out, **_):
        if out.name.startswith("selector-") and config.learning_rate in failing:
            raise TrainingDiverged("nan")
        return {"dev_per_response_accuracy": 50.0, "config": {"learning_rate": config.learning_rate}}

    monkeypatch.setattr(networks, "fit_and_export", fake_fit)
    monkeypatch.setattr(networks, "SavedModelRanker", lambda path: path)
    spec = build_spec(task, memory_size=40)
    mmn, summaries = networks.train_mmn(spec, task.split("trn"), task.split("dev"), intents,
                                        train_config("memn2n", epochs=1), tmp_path, selector="memn2n")
    assert summaries["selector"]["config"]["learning_rate"] == 0.01
    assert summaries["selector"]["diverged_learning_rates"] == [0.001] and mmn.selector.name == "selector-0.01"
    failing.add(0.01)
    with pytest.raises(TrainingDiverged):
        networks.train_mmn(spec, task.split("trn"), task.split("dev"), intents, train_config("memn2n", epochs=1),
                           tmp_path, selector="memn2n")


def test_the_word_selector_weighs_the_words_that_tell_intents_apart(tmp_path) -> None:
    """Openings worded as no training opening is: the intent's word decides, not the template's other words (the
    paper's MemN2N selector sent "what is the balance on ... right now" to the limit, whose training template it
    resembles)."""
    def opening(query: str, intent: str) -> TurnExample:
        return TurnExample(f"{intent}-{query}", "banking", "trn", OPENING_TURN, (), (), query,
                           SELECTOR_ACTION.format(intent=intent))

    accounts = ("savings", "checking", "joint", "student")
    # As the generator's training templates are: the framings are shared by the two intents, but one.
    frames = ("how high is my {what} on {account}", "i need to know the {what} of {account}",
              "could you give me the {account} {what}", "show me the {what} of my {account} account")
    trn = [opening(frame.format(what=what, account=account), f"account_{what}") for account in accounts
           for frame in frames for what in ("balance", "limit")]
    trn += [opening(f"what is the limit on {account} right now", "account_limit") for account in accounts]
    trn += [opening(f"block a card linked to my {account} account", "block_card") for account in accounts]
    actions = [SELECTOR_ACTION.format(intent=intent) for intent in INTENTS]
    selector = WordSelector(actions).fit(trn)
    dev = [opening(f"what is the balance on {account} right now", "account_balance") for account in accounts]
    dev.append(opening("please block my card", "block_card"))
    assert accuracy_report(dev, best_answers(selector, dev))["per_response_accuracy"] == 100.0
    ranked = selector.rank(dev[:1], 3)
    assert ranked[0][0] == SELECTOR_ACTION.format(intent="account_balance") and len(ranked[0]) == 3
    selector.save(tmp_path / "selector.json")
    saved = json.loads((tmp_path / "selector.json").read_text())
    assert "balance" in saved["words"] and len(saved["coefficients"]) == len(saved["actions"]) == 3
    with pytest.raises(ValueError, match="not actions"):
        WordSelector(actions[:1]).fit(trn)
