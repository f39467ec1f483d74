"""The task-6 rule-based system on a small hand-made corpus in the public task-6 layout."""

from __future__ import annotations

from data.layout import discover
from models.babi.rule_based_dstc2 import DONT_CARE, DSTC2RuleBased
from models.examples import TaskData, split_examples
from models.methods import best_answers
from models.metrics import accuracy_report
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


def test_follows_the_dialog_state_on_unseen_entities() -> None:
    files = discover(FIXTURE)[6]
    system = DSTC2RuleBased.fit(TaskData.load(files))
    assert {"thai", "korean"} <= system.values["cuisine"] and "north" in system.values["location"]
    dev = split_examples(files, "dev")
    predictions = best_answers(system, dev)
    assert accuracy_report(dev, predictions)["per_response_accuracy"] == 100.0
    # the best-rated result is offered, and the phone request is answered for it
    assert predictions[2] == "api_call korean south R_price"  # two slots known: the API is called
    assert predictions[3] == "the_fir is a nice restaurant in the south of town serving korean food"
    assert predictions[4] == "The phone number of the_fir is the_fir_phone"


def test_reads_dont_care_for_the_slot_just_asked_and_offers_the_next_best() -> None:
    files = discover(FIXTURE)[6]
    system = DSTC2RuleBased.fit(TaskData.load(files))
    trn = split_examples(files, "trn")
    state = system._read(trn[-3])  # "i dont care" after the location question
    assert state.slots == {"cuisine": "korean", "location": DONT_CARE}
    assert system.predict(trn[-3]) == "api_call korean R_location R_price"
    assert system.predict(trn[4]) == "the_oak is a nice restaurant in the north of town serving thai food"
    assert system.predict(trn[-2]) == "Sorry there is no korean restaurant"
