"""The restaurant simulator: the KBs, the patterns, and the rules of tasks 1-5 checked on generated dialogs.

The checks read dialogs back as text (what a model sees), not the simulator's internal state.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from data import babi_format
from data.babi.kb import CUISINES, LOCATIONS, PARTY_SIZES, PRICES, Request, build_kbs
from data.babi.patterns import USER_PATTERNS, bot_pattern_count, user_pattern_count
from data.babi.simulator import LITERAL_MIN_RESULTS, MIN_RESULTS, OOV_SPLIT, build_world, generate_dialog
from data.corpus import SILENCE, Dialog, DialogFile, Turn, is_api_call

SEED = 7
N = 150  # dialogs per (task, split) in these checks
SNAPSHOT = Path(__file__).parent / "snapshots" / "restaurant_seed0_dialog0.txt"


@pytest.fixture(scope="module")
def world():
    return build_world(SEED)


def dialogs(world, task: int, split: str, n: int = N, min_results: int | None = None) -> list[Dialog]:
    return [generate_dialog(world, task, split, index, min_results) for index in range(n)]


def api_calls(dialog: Dialog) -> list[list[str]]:
    return [turn.bot.split()[1:] for turn in dialog.turns if is_api_call(turn.bot)]


def options(dialog: Dialog) -> list[str]:
    prefix = "what do you think of this option: "
    return [turn.bot[len(prefix):] for turn in dialog.turns if turn.bot.startswith(prefix)]


def results(dialog: Dialog) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for line in dialog.kb_results:
        entity, attribute, value = line.fact
        found.setdefault(entity, {})[attribute] = value
    return found


def user_mentions(dialog: Dialog) -> list[tuple[str, str]]:
    """(field, value) for each entity word the user says, in order."""
    vocab = {**{c: "cuisine" for c in CUISINES}, **{loc: "location" for loc in LOCATIONS},
             **{p: "party_size" for p in PARTY_SIZES}, **{p: "price" for p in PRICES}}
    return [(vocab[word], word) for turn in dialog.turns for word in turn.user.split() if word in vocab]


# ------------------------------------------------------------------------------------------- KB and patterns


def test_two_kbs_of_600_restaurants_sharing_only_prices_ratings_party_sizes() -> None:
    kb, kb_oov = build_kbs(SEED)
    for one in (kb, kb_oov):
        assert len(one.restaurants) == 600 and len(one.facts()) == 4200
        assert len({r.name for r in one.restaurants}) == 600
        assert {r.party_size for r in one.restaurants} == set(PARTY_SIZES)
        assert {r.rating for r in one.restaurants} == set(range(1, 9))
        assert {r.price for r in one.restaurants} == set(PRICES)
    assert set(kb.cuisines).isdisjoint(kb_oov.cuisines) and len(kb.cuisines + kb_oov.cuisines) == 10
    assert set(kb.locations).isdisjoint(kb_oov.locations) and len(kb.locations + kb_oov.locations) == 10
    values = [{fact.value for fact in one.facts() if fact.attribute in ("R_phone", "R_address")} for one in
              (kb, kb_oov)]
    assert values[0].isdisjoint(values[1])


def test_pattern_counts_match_the_paper() -> None:
    assert user_pattern_count() == 43
    assert max(len(ways) for ways in USER_PATTERNS.values()) <= 4
    assert bot_pattern_count() == 16  # the 4,212 candidates of Table 1 (see restaurant_patterns)


def test_candidate_set_is_every_bot_utterance_over_both_kbs(world) -> None:
    candidates = world.candidates()
    assert len(candidates) == len(set(candidates)) == 4212
    said = {turn.bot for task in range(1, 6) for split in world.pools for d in dialogs(world, task, split, 40)
            for turn in d.turns}
    assert said <= set(candidates)


# ------------------------------------------------------------------------------------------- determinism


def test_a_dialog_is_a_function_of_seed_task_split_index(world) -> None:
    again = build_world.__wrapped__(SEED)  # a fresh world, not the cached one
    for task in range(1, 6):
        assert generate_dialog(world, task, "dev", 11) == generate_dialog(again, task, "dev", 11)
    other = build_world(SEED + 1)
    assert [generate_dialog(world, 5, "trn", i) for i in range(20)] != [
        generate_dialog(other, 5, "trn", i) for i in range(20)]


def test_snapshot_of_first_dialogs_of_seed_0() -> None:
    zero = build_world(0)
    text = "".join(babi_format.render_dialogs(DialogFile([generate_dialog(zero, task, "trn", 0)]))
                   for task in range(1, 6))
    assert text == SNAPSHOT.read_text()


# ------------------------------------------------------------------------------------------- task rules


def test_task1_api_call_matches_the_request(world) -> None:
    given_counts = Counter()
    for dialog in dialogs(world, 1, "trn"):
        mentions = user_mentions(dialog)
        fields = dict(mentions)
        assert len(mentions) == len(fields) == 4, "each field said exactly once"
        assert api_calls(dialog) == [[fields["cuisine"], fields["location"], fields["party_size"], fields["price"]]]
        assert dialog.turns[-1].user == SILENCE
        request_words = set(dialog.turns[1].user.split())
        given_counts[sum(value in request_words for value in fields.values())] += 1
    assert set(given_counts) == {0, 1, 2, 3, 4}  # 0-4 fields given up front


def test_task1_bot_asks_missing_fields_in_a_fixed_order(world) -> None:
    order = ["any preference on a type of cuisine", "where should it be", "how many people would be in your party",
             "which price range are looking for"]
    for dialog in dialogs(world, 1, "dev"):
        asked = [turn.bot for turn in dialog.turns if turn.bot in order]
        assert asked == sorted(asked, key=order.index)


def test_task2_updated_api_call_applies_the_updates(world) -> None:
    update_counts = Counter()
    for dialog in dialogs(world, 2, "trn"):
        first, second = api_calls(dialog)
        final = dict(user_mentions(dialog))  # the last value said for each field wins
        assert second == [final["cuisine"], final["location"], final["party_size"], final["price"]]
        updates = sum(turn.bot == "sure is there anything else to update" for turn in dialog.turns)
        assert sum(a != b for a, b in zip(first, second, strict=True)) == updates
        update_counts[updates] += 1
    assert set(update_counts) == {1, 2, 3, 4}


def test_task3_options_by_decreasing_rating_until_accepted(world) -> None:
    for dialog in dialogs(world, 3, "tst"):
        shown = results(dialog)
        assert len(shown) >= 3
        proposed = options(dialog)
        ratings = [int(shown[name]["R_rating"]) for name in proposed]
        assert ratings == sorted(ratings, reverse=True) and len(set(ratings)) == len(ratings)
        assert ratings[0] == max(int(facts["R_rating"]) for facts in shown.values())
        assert dialog.turns[-1].bot == "great let me do the reservation"
        assert isinstance(dialog.lines[0], type(dialog.kb_results[0])), "KB results open the dialog"
        assert not api_calls(dialog)


def test_task3_user_accepts_a_quarter_of_the_options(world) -> None:
    accepted = proposals = 0
    for dialog in dialogs(world, 3, "trn", 400):
        shown, proposed = results(dialog), options(dialog)
        if len(proposed) < len(shown):  # the last option is always accepted: count the free choices only
            accepted += 1
        proposals += len(proposed) - (len(proposed) == len(shown))
    assert 0.2 < accepted / proposals < 0.3


def test_task4_answers_phone_and_address_from_the_booked_restaurant(world) -> None:
    asked = Counter()
    for dialog in dialogs(world, 4, "trn", 400):
        (name, facts), = results(dialog).items()
        assert len(dialog.kb_results) == 7
        assert dialog.turns[1].user.endswith(name)
        answers = [turn.bot for turn in dialog.turns[2:]]
        assert set(answers) <= {f"here it is {facts['R_phone']}", f"here it is {facts['R_address']}"}
        asked[len(answers)] += 1
    assert 0.4 < asked[2] / sum(asked.values()) < 0.6  # both: 50%


def test_task5_results_are_the_final_api_call_and_the_dialog_runs_to_the_end(world) -> None:
    for dialog in dialogs(world, 5, "dev"):
        calls = api_calls(dialog)
        assert len(calls) == 2
        cuisine, location, party_size, price = calls[-1]
        shown = results(dialog)
        assert len(shown) >= MIN_RESULTS[5] == 3, "three results at least, as Table 1's figures imply"
        expected = {r.name for r in world.kb.query(Request(cuisine, location, party_size, price))}
        assert set(shown) == expected
        for facts in shown.values():
            assert (facts["R_cuisine"], facts["R_location"], facts["R_number"], facts["R_price"]) == tuple(calls[-1])
        booked = options(dialog)[-1]
        assert any(turn.bot.startswith(f"here it is {booked}_") for turn in dialog.turns)
        assert [turn.bot for turn in dialog.turns[-2:]] == ["is there anything i can help you with", "you're welcome"]


def test_task5_minimum_results_hold_on_every_split_and_the_literal_reading_allows_fewer(world) -> None:
    for split in ("trn", "tst", OOV_SPLIT):
        assert min(len(results(dialog)) for dialog in dialogs(world, 5, split, 100)) == 3
    literal = Counter(len(results(dialog)) for dialog in dialogs(world, 5, "trn", 100, LITERAL_MIN_RESULTS))
    assert min(literal) == LITERAL_MIN_RESULTS == 1
    assert literal[1] and literal[2]
    with pytest.raises(ValueError, match="at least 1"):
        generate_dialog(world, 5, "trn", 0, 0)


def test_eligible_requests_are_found_for_any_minimum_and_none_is_an_error(world) -> None:
    assert world.eligible("dev", 2) == tuple(r for r in world.eligible("dev", 0) if len(world.kb.query(r)) >= 2)
    with pytest.raises(ValueError, match="no request with 9\\+ results"):
        world.eligible("dev", 9)  # a request returns at most 8 restaurants, one per rating


# ------------------------------------------------------------------------------------------- splits


def test_oov_dialogs_only_use_the_second_kb(world) -> None:
    oov_words = set(world.kb_oov.cuisines) | set(world.kb_oov.locations) | {
        r.name for r in world.kb_oov.restaurants}
    plain_words = set(world.kb.cuisines) | set(world.kb.locations) | {r.name for r in world.kb.restaurants}
    for task in range(1, 6):
        for split, forbidden, allowed in ((OOV_SPLIT, plain_words, oov_words), ("tst", oov_words, plain_words)):
            for dialog in dialogs(world, task, split, 60):
                words = {w for line in dialog.lines
                         for w in (f"{line.user} {line.bot}" if isinstance(line, Turn) else line.text).split()}
                assert not words & forbidden
                assert {w for w in words if w.startswith("resto_") and "stars" == w[-5:]} <= allowed


def test_training_and_test_dialogs_never_share_a_user_request(world) -> None:
    def requests(split: str, task: int) -> set[tuple[str, ...]]:
        # The user's request is the first API call; tasks 2 and 5 may update it to any request afterwards.
        return {tuple(api_calls(d)[0]) for d in dialogs(world, task, split, 300)}

    pools = [set(world.pools[split]) for split in ("trn", "dev", "tst")]
    assert all(a.isdisjoint(b) for i, a in enumerate(pools) for b in pools[i + 1:])
    for task in (1, 2, 5):
        assert requests("trn", task).isdisjoint(requests("tst", task))
    booked = {split: {tuple(options(d)[-1:]) for d in dialogs(world, 3, split, 300)} for split in ("trn", "tst")}
    assert booked["trn"].isdisjoint(booked["tst"])


def test_updated_requests_may_leave_the_pool(world) -> None:
    """After updates the request may be one of another split's (as the paper's task 5 figures imply)."""
    finals = {tuple(api_calls(d)[-1]) for d in dialogs(world, 5, "tst", 300)}
    trn_pool = {(r.cuisine, r.location, r.party_size, r.price) for r in world.pools["trn"]}
    assert finals & trn_pool and finals - trn_pool
