"""The context each task-6 decision follows: the call's outcome, whether it came just before, the acts around it."""

from __future__ import annotations

from data.babi_format import parse_dialogs
from data.facts import dialog_facts
from models.babi.decisions import (
    Context,
    count,
    format_markdown,
    format_unseen,
    kb_matches,
    turns,
    unseen_golds,
    user_act,
)
from models.examples import TaskData, dialogs_examples

DIALOG = """1 <SILENCE>\tHello , welcome to the Cambridge restaurant system . How may I help you ?
2 tuscan food\tSorry there is no tuscan restaurant in any part of town
3 any part of town\tOk , a restaurant in any part of town is that right?
4 yes\tapi_call italian R_location R_price
5 api_call no result
6 <SILENCE>\tSorry there is no italian restaurant that matches your request
7 how about thai\tapi_call thai R_location R_price
8 bangkok_city R_rating 6
9 <SILENCE>\tbangkok_city is a nice restaurant in the centre of town serving thai food
10 thank you goodbye\tyou are welcome
"""


def test_each_bot_turn_gets_the_context_it_answers() -> None:
    (dialog,) = parse_dialogs(DIALOG, "t.txt").dialogs
    seen = list(turns(dialog))
    assert [kind for _, kind in seen] == ["greeting_goodbye", "no_match", "confirmation", "api_call", "no_match",
                                          "api_call", "offer", "greeting_goodbye"]
    assert seen[1][0] == Context("none", False, "greeting_goodbye", "inform")  # a no match before any call
    assert seen[2][0] == Context("none", False, "no_match", "dontcare")
    assert seen[4][0] == Context("no_result", True, "api_call", "silence")  # right after a call that found nothing
    assert seen[5][0] == Context("no_result", False, "no_match", "reqalts")
    assert seen[6][0] == Context("results", True, "api_call", "silence")
    assert [user_act(u) for u in ("yes", "no not that one", "is there anything else", "what is the phone number")] == [
        "affirm", "negate", "reqalts", "request"]


def test_the_counts_say_which_context_each_decision_follows() -> None:
    matched = [True, False, True, True, False, True, True, True]  # the two no matches where the KB has nothing
    counted = {"group": "g", "dialogs": 1, **count(parse_dialogs(DIALOG, "t.txt").dialogs, matched)}
    assert counted["no_match"]["after_call"] == {"none": 1, "no_result (just called)": 1}
    assert counted["just_after_no_result"] == {"no_match": 1} and counted["just_after_results"] == {"offer": 1}
    row = format_markdown([counted]).splitlines()[2]
    assert row == ("| g | 1 | 8 | 25.0 | 50.0 / 50.0 | 12.5 | 100.0 | 0.0 | - | 100.0 / 0.0 / 0.0 (of 1) | "
                   "100.0 / 0.0 (of 2 / 6) | 100.0 / 0.0 (of 1 / 7) |")


KB_DIALOG = """1 <SILENCE>\tHello , welcome to the Cambridge restaurant system . How may I help you ?
2 thai food in the north\tSorry there is no thai restaurant in the north of town
3 how about the centre\tapi_call thai centre R_price
4 bangkok_city R_cuisine thai
5 bangkok_city R_location centre
6 <SILENCE>\tbangkok_city is a nice restaurant in the centre of town serving thai food
7 is there italian in the north\tapi_call italian north R_price
8 roma R_cuisine italian
9 roma R_location north
10 <SILENCE>\troma is a nice restaurant in the north of town serving italian food
"""


def test_the_kb_match_is_the_trackers_state_against_the_training_kb() -> None:
    """Thai in the north has no restaurant in the dialog's KB results; thai in the centre and italian in the north
    have one each."""
    dialogs = parse_dialogs(KB_DIALOG, "t.txt").dialogs
    examples = dialogs_examples(dialogs, 6, "trn")
    task = TaskData.of_examples(examples, examples, [], dialog_facts(dialogs))
    assert kb_matches(dialogs, task) == [True, False, True, True, True, True]


def test_unseen_golds_are_the_held_turns_whose_gold_no_training_turn_has() -> None:
    (dialog,) = parse_dialogs(DIALOG, "t.txt").dialogs
    held = dialogs_examples([dialog], 6, "tst")
    training = [e for e in held if e.turn in (0, 1, 3)]  # the greeting, the first no match and the first call
    counted = unseen_golds(training, held)
    # Unseen: the confirmation, the second no match, the second call, the offer and the goodbye.
    assert counted == {"greeting_goodbye": (1, 2), "no_match": (1, 2), "confirmation": (1, 1), "api_call": (1, 2),
                       "offer": (1, 1), "all": (5, 8)}
    table = format_unseen([("held", counted)], {"offer": 6.7, "all": 17.7}).splitlines()
    assert table[0] == "| kind | held | held-back test (maintainers) |"
    assert "| offer | 100.0 (of 1) | 6.7 |" in table and "| all | 62.5 (of 8) | 17.7 |" in table
    assert "| contact | - | - |" not in table  # a kind neither side has is left out
