"""The context each task-6 decision follows: the call's outcome, whether it came just before, the acts around it."""

from __future__ import annotations

from data.babi_format import parse_dialogs
from models.babi.decisions import Context, count, format_markdown, turns, user_act

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
    counted = {"group": "g", "dialogs": 1, **count(parse_dialogs(DIALOG, "t.txt").dialogs)}
    assert counted["no_match"]["after_call"] == {"none": 1, "no_result (just called)": 1}
    assert counted["just_after_no_result"] == {"no_match": 1} and counted["just_after_results"] == {"offer": 1}
    row = format_markdown([counted]).splitlines()[2]
    assert row.startswith("| g | 1 | 8 | 25.0 | 50.0 / 50.0 | 12.5 | 100.0 | 0.0 | - | 100.0 / 0.0 / 0.0 (of 1) |")
