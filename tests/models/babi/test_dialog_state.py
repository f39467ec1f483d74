"""The dialog state tracker in TF ops: the rule-based system's state on DSTC2-like dialogs, learned questions."""

from __future__ import annotations

from dataclasses import replace

import pytest
import tensorflow as tf

from data.layout import discover
from models.babi.dialog_state import DialogStateTracker, StateSpec, kb_entries
from models.babi.rule_based_dstc2 import (
    ANY_SLOT_WORDS,
    ASK,
    DONT_CARE,
    DONT_CARE_PHRASES,
    SLOTS,
    SPELLINGS,
    DSTC2RuleBased,
)
from models.examples import TaskData, TurnExample, pad_batch
from tests import FIXTURES

HELLO = "Hello , welcome to the test restaurant system . How may I help you ?"


def example(lines: list[tuple[str, str]], query: str) -> TurnExample:
    """A turn whose memory is ``lines`` of (speaker, text), oldest first."""
    return TurnExample("d", "6", "tst", len(lines), tuple(t for _, t in lines), tuple(s for s, _ in lines), query,
                       "")


# Turns that exercise each rule: a slot named by "any ...", "don't care" of the slot just asked for, a value said
# after "don't care" (and the reverse), a spelling, KB results (not user turns), and the latest API call.
CASES = [
    example([("bot", HELLO)], "i want thai food in the center"),
    example([("bot", HELLO), ("user", "thai food"), ("bot", ASK["location"])], "i dont care"),
    example([("bot", HELLO), ("user", "any area please"), ("bot", ASK["cuisine"])], "thai"),
    example([("bot", HELLO), ("user", "north"), ("bot", ASK["cuisine"])], "any part of town is fine"),
    example([("bot", HELLO), ("user", "cheap thai"), ("bot", ASK["location"]), ("user", "doesnt matter"),
             ("bot", "api_call thai R_location cheap"), ("user", "the_oak R_rating 4"), ("bot", "the_oak is nice")],
            "what about korean"),
    example([("bot", HELLO), ("user", "cheap thai"), ("bot", ASK["location"]), ("user", "doesnt matter"),
             ("bot", "api_call thai R_location cheap"), ("user", "api_call no result")], "<SILENCE>"),
    example([("bot", ASK["price"])], "expensive any food"),
    example([("bot", HELLO), ("user", "thai"), ("bot", ASK["location"])], "any north restaurant"),
    example([], "<SILENCE>"),
]


@pytest.fixture(scope="module")
def system() -> DSTC2RuleBased:
    return DSTC2RuleBased.fit(TaskData.load(discover(FIXTURES / "task6-rules")[6]))


def rule_spec(system: DSTC2RuleBased) -> StateSpec:
    """The rule-based system's knowledge as a tracker's spec: its values, questions and words."""
    values = {w: slot for slot, words in system.values.items() for w in words}
    return StateSpec(SLOTS, values, {q: s for s, q in ASK.items()}, ANY_SLOT_WORDS, DONT_CARE_PHRASES, SPELLINGS)


def rule_words(system: DSTC2RuleBased, e: TurnExample) -> str:
    state = system._read(e)
    words = [f"state_{s}_" + ("unknown" if s not in state.slots else "dontcare" if state.slots[s] == DONT_CARE
                              else "value") for s in SLOTS]
    wanted = {s: state.slots.get(s, DONT_CARE) for s in SLOTS}
    call = "none" if state.called is None else "same" if state.called == wanted else "changed"
    return " ".join([*words, f"state_call_{call}"])


def test_the_tracker_keeps_the_rule_based_systems_state(system) -> None:
    task = TaskData.load(discover(FIXTURES / "task6-rules")[6])
    examples = [*task.split("trn"), *task.split("dev"), *CASES]
    assert DialogStateTracker(rule_spec(system)).words(examples) == [rule_words(system, e) for e in examples]


def test_each_rule_of_the_state(system) -> None:
    words = DialogStateTracker(rule_spec(system)).words(CASES)
    assert words[0] == "state_cuisine_value state_location_value state_price_unknown state_call_none"  # "center"
    assert words[1] == "state_cuisine_value state_location_dontcare state_price_unknown state_call_none"
    assert words[2] == "state_cuisine_value state_location_dontcare state_price_unknown state_call_none"
    assert words[3] == "state_cuisine_unknown state_location_dontcare state_price_unknown state_call_none"
    assert words[4] == "state_cuisine_value state_location_dontcare state_price_value state_call_changed"
    assert words[5] == "state_cuisine_value state_location_dontcare state_price_value state_call_same"
    assert words[6] == "state_cuisine_dontcare state_location_unknown state_price_value state_call_none"
    assert words[7] == "state_cuisine_value state_location_value state_price_unknown state_call_none"
    assert words[8] == "state_cuisine_unknown state_location_unknown state_price_unknown state_call_none"
    _, value, _ = DialogStateTracker(rule_spec(system)).state(*_tensors(CASES[:1]))
    assert value.numpy().tolist() == [[b"thai", b"centre", b""]]
    # An API call with fewer arguments than slots asks for no value of the others (the words after it are not its).
    short = example([("bot", HELLO), ("user", "thai food"), ("bot", "api_call thai")], "thanks")
    assert DialogStateTracker(rule_spec(system)).words([short]) == [
        "state_cuisine_value state_location_unknown state_price_unknown state_call_same"]


def _tensors(examples: list[TurnExample]) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    memory, speaker, query = pad_batch(examples)
    return tf.constant(memory, tf.string), tf.constant(speaker, tf.string), tf.constant(query, tf.string)


def test_slots_and_questions_are_learned_from_the_training_dialogs() -> None:
    types = {"thai": "cuisine", "korean": "cuisine", "north": "location", "south": "location", "cheap": "price",
             "the_oak": "name"}
    which = "Which area ?"
    turns = [example([("bot", HELLO), ("user", "thai"), ("bot", which)], reply) for reply in
             ("north", "south please", "the north", "north", "south", "i dont care")]
    turns += [example([("bot", HELLO)], reply) for reply in ("thai", "korean", "north", "cheap thai", "south",
                                                              "thai please", "north", "korean", "south")]
    turns += [replace_answer(turns[0], "api_call thai north R_price"),
              replace_answer(turns[1], "api_call thai south cheap")]
    spec = StateSpec.learn(types, turns)
    assert spec.slots == ("cuisine", "location", "price")
    assert spec.values == {"thai": "cuisine", "korean": "cuisine", "north": "location", "south": "location",
                           "cheap": "price"}
    # Five of six replies give an area; the greeting's give a cuisine five times, but an area four times.
    assert spec.asked == {which: "location"}
    assert spec.slot_words["area"] == "location"
    words = DialogStateTracker(spec).words([example([("bot", HELLO), ("user", "thai"), ("bot", which)], "any")])
    assert words == ["state_cuisine_value state_location_dontcare state_price_unknown state_call_none"]


def test_the_match_says_whether_some_kb_entry_has_the_states_values(system) -> None:
    """``state_match_none`` exactly when no entry of the KB has every value the state holds (don't care and unknown
    slots take any), checked against that definition in plain Python over each case."""
    facts = [("the_oak", "R_cuisine", "thai"), ("the_oak", "R_location", "centre"), ("the_oak", "R_price", "cheap"),
             ("the_oak", "R_phone", "the_oak_phone"), ("kim", "R_cuisine", "korean"), ("kim", "R_location", "north"),
             ("kim", "R_price", "expensive")]
    spec = replace(rule_spec(system), entries=kb_entries(SLOTS, rule_spec(system).values, facts))
    assert spec.entries == (("korean", "north", "expensive"), ("thai", "centre", "cheap"))
    tracker = DialogStateTracker(spec)
    state, value, _ = tracker.state(*_tensors(CASES))
    expected = [any(all(s != 1 or v.decode() == e for s, v, e in zip(states, values, entry, strict=True))
                    for entry in spec.entries) for states, values in zip(state.numpy(), value.numpy(), strict=True)]
    words = tracker.words(CASES)
    assert [w.endswith(" state_match_" + ("some" if m else "none")) for w, m in zip(words, expected, strict=True)] \
        == [True] * len(CASES)
    assert expected.count(False) >= 2 and expected.count(True) >= 2  # both kinds of case are met
    # Without entries the state says nothing of the KB (the words of the other tests).
    assert not any("state_match" in w for w in DialogStateTracker(rule_spec(system)).words(CASES))


def replace_answer(e: TurnExample, answer: str) -> TurnExample:
    return replace(e, answer=answer)


def test_a_tracker_needs_slots_and_plain_phrases() -> None:
    with pytest.raises(ValueError, match="slots"):
        DialogStateTracker(StateSpec((), {}, {}, {}))
    with pytest.raises(ValueError, match="phrases"):
        DialogStateTracker(StateSpec(("cuisine",), {}, {}, {}, ("any|.*",)))


def test_calls_asks_for_the_state_like_its_definition(system) -> None:
    """An API call asks for the state when each valued slot's argument is its value, and every other argument is
    an R_ word; compared against that definition in plain Python, and with no call at all."""
    tracker = DialogStateTracker(rule_spec(system))
    state, value, _ = tracker.state(*map(tf.constant, pad_batch(CASES)))
    arguments = [["thai", "R_location", "cheap"], ["thai", "north", "cheap"], ["R_cuisine", "R_location", "cheap"],
                 ["korean", "R_location", "R_price"], ["R_cuisine", "R_location", "R_price"],
                 ["thai", "R_location", "expensive"]]
    asks = tracker.calls(state, value, tf.constant(arguments)).numpy()
    states, values = state.numpy(), value.numpy().astype(str)
    for b in range(len(CASES)):
        for a, words in enumerate(arguments):
            expected = all(w == values[b, s] if states[b, s] == 1 else w.startswith("R_") for s, w in enumerate(words))
            assert asks[b, a] == expected, (b, words, values[b], states[b])
    assert asks.any() and not asks.all()
    assert tracker.calls(state, value, tf.zeros([0, 3], tf.string)).shape == (len(CASES), 0)
