"""The banking self-play generator: layout, determinism, and the guarantees the challenge sets rest on."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from data import babi_format
from data.babi_format import FormatError
from data.banking.domain import ALTERNATIVE_SLOTS, SLOTS
from data.banking.generation import BankingPlan, generate, plan_of, scenarios, self_play
from data.banking.labels import NONE, read_labels
from data.banking.readings import Readings
from data.banking.selfplay import API, TRAINING_VOLUNTEERED, USER, Action, Scenario
from data.banking.templates import JOINERS, USER_TEMPLATES, template_thirds
from data.layout import discover
from data.stats import corpus_stats
from data.validate import validate_corpus
from pipeline.cli import main

PLAN = BankingPlan(seed=3, train_dialogs=40, dev_dialogs=10, test_dialogs=10)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("banking")
    generate(PLAN, out)
    return out


def _canonical_next(intent: str, filled: dict[str, str], alternative: bool) -> str | None:
    """The slot training's flow asks next: the first of the flow's slots not filled yet."""
    order = ALTERNATIVE_SLOTS[intent] if alternative else SLOTS[intent]
    return next((slot for slot in order if slot not in filled), None)


def _user_utterances(path: Path) -> list[str]:
    return [turn.user for dialog in babi_format.read_dialogs(path) for turn in dialog.turns if turn.user != "<SILENCE>"]


def test_corpus_is_a_valid_dialog_babi_directory_with_labels(corpus: Path) -> None:
    files = discover(corpus)[7]
    assert files.name == "banking" and sorted(files.splits) == ["dev", "dev-OOP", "trn", "tst", "tst-OOT"]
    assert validate_corpus(corpus).ok
    labels = read_labels(corpus / "dialog-babi-task7-banking-labels.jsonl")
    for split, path in files.splits.items():
        assert len(babi_format.read_dialogs(path)) == sum(label["split"] == split for label in labels)
    for dialog in babi_format.read_dialogs(files.splits["trn"]):
        assert dialog.turns[-1].bot == "api_call end_call"
        invalid_in_a_row = 0
        for line in dialog.kb_results:
            if line.text.endswith(" R_status invalid"):
                invalid_in_a_row += 1
                assert invalid_in_a_row <= 3
            elif line.text.endswith(" R_status valid"):
                invalid_in_a_row = 0


def test_the_development_challenge_sets_hold_every_test_case_in_development_wording(corpus: Path) -> None:
    """dev-OOP: each OOP case of the tests (single and multiple), as many dialogs per intent and case as dev has per
    intent, every user turn in a development template, no non-OOP dialog; the other files do not change for it."""
    labels = read_labels(corpus / "dialog-babi-task7-banking-labels.jsonl")
    development = [label for label in labels if label["split"] == "dev-OOP"]
    cases = {(label["intent"], label["challenge"], label["multiple"]) for label in labels if label["split"] == "tst"
             and label["challenge"] != NONE}
    assert {(label["intent"], label["challenge"], label["multiple"]) for label in development} == cases
    assert len(development) == PLAN.dev_dialogs * len(cases)
    assert {label["templates"] for label in development} == {"dev"} and all(d["challenge_turns"] for d in development)
    thirds = template_thirds()
    forms = [re.compile(re.sub(r"\\\{\w+\\\}", r"\\S+", re.escape(template)))
             for form in USER_TEMPLATES for template in thirds[form]["dev"]]
    joiners = [re.compile(re.escape(joiner).replace(r"\{first\}", "(.+)").replace(r"\{second\}", "(.+)"))
               for joiner in JOINERS.values()]

    def developed(utterance: str) -> bool:
        if any(form.fullmatch(utterance) for form in forms):
            return True
        return any((m := joiner.fullmatch(utterance)) and all(developed(part) for part in m.groups())
                   for joiner in joiners)

    utterances = _user_utterances(corpus / "dialog-babi-task7-banking-dev-OOP.txt")
    assert utterances and all(developed(u) for u in utterances), [u for u in utterances if not developed(u)][:3]


def test_same_seed_same_bytes(corpus: Path, tmp_path: Path) -> None:
    generate(PLAN, tmp_path)
    for path in corpus.iterdir():
        assert path.read_bytes() == (tmp_path / path.name).read_bytes(), path.name


def test_every_challenge_dialog_marks_its_phenomenon(corpus: Path) -> None:
    labels = read_labels(corpus / "dialog-babi-task7-banking-labels.jsonl")
    tests = [label for label in labels if label["split"] in ("tst", "tst-OOT")]
    assert {label["challenge"] for label in tests} == {NONE, "turn_compression", "new_api", "reordering",
                                                      "another_slot", "audit_more"}
    for label in tests:
        if label["challenge"] == NONE:
            assert label["challenge_turns"] == []
        else:
            assert len(label["challenge_turns"]) >= (2 if label["multiple"] else 1), label
    assert {label["templates"] for label in tests} == {"IT", "OOT"}
    stats = corpus_stats(corpus)
    assert stats["banking"]["dialogs"]["transfer"]["OOT/audit_more-multiple"] == PLAN.test_dialogs
    assert stats["banking"]["dialogs"]["account_limit"]["trn"] == PLAN.train_dialogs


def test_no_out_of_pattern_structure_in_training() -> None:
    for scenario, count in scenarios(PLAN, "trn"):
        for index in range(count):
            actions = self_play(PLAN.seed, "trn", scenario, index).actions
            user = [a for a in actions if a.speaker == USER]
            assert not {"affirm_inform", "inform_inform"} & {a.act for a in user}  # no compression, no audit more
            assert (len(user[0].slots) - 1) % 2 == 1 or len(user[0].slots) == 1  # none or odd volunteered slots
            filled: dict[str, str] = {}
            alternative = False
            for previous, action in zip(actions, actions[1:], strict=False):
                if action.act == "request":
                    alternative = alternative or action.value("slot") in ("card_type",) or (
                        dict(action.slots).get("path") == "alternative")
                    if previous.act != "affirm":  # the system asks in the flow's order
                        assert action.value("slot") == _canonical_next(scenario.intent, filled, alternative)
                if action.act == "inform" and previous.act == "request":  # the answer is the requested slot
                    assert [slot for slot, _ in action.slots] == [previous.value("slot")]
                if action.speaker == "api" and action.slots[0][1] == "valid":
                    api_call = previous
                    slot, value = api_call.slots[-1]
                    filled[slot] = value


def test_out_of_template_wording_never_realises_training_dialogs(corpus: Path) -> None:
    thirds = template_thirds()
    for form in USER_TEMPLATES:
        assert not set(thirds[form]["OOT"]) & (set(thirds[form]["trn"]) | set(thirds[form]["dev"]))
    training = set(_user_utterances(corpus / "dialog-babi-task7-banking-trn.txt"))
    seen = [re.sub(r"\{\w+\}", "x", t) for form in USER_TEMPLATES for t in (*thirds[form]["trn"], *thirds[form]["dev"])]
    oot_patterns = [re.compile(re.sub(r"\\\{\w+\\\}", r"\\S+", re.escape(template)))
                    for form in USER_TEMPLATES for template in thirds[form]["OOT"]
                    if len(re.sub(r"\{\w+\}", "", template).split()) >= 2]  # templates with words of their own
    # Leave out OOT shapes that a training or development template of another form shares ("it is {x}").
    oot_patterns = [p for p in oot_patterns if not any(p.fullmatch(shape) for shape in seen)]
    assert oot_patterns
    for utterance in training:
        assert not any(pattern.fullmatch(utterance) for pattern in oot_patterns), utterance
    affirm = "(" + "|".join(map(re.escape, USER_TEMPLATES["affirm"])) + ")"
    joined = re.compile(re.escape(JOINERS["affirm_inform"]).replace(r"\{first\}", affirm).replace(r"\{second\}", ".+"))
    compressed = [u for u in _user_utterances(corpus / "dialog-babi-task7-banking-tst.txt") if joined.fullmatch(u)]
    assert compressed and not [u for u in training if joined.fullmatch(u)]


def test_final_api_call_uses_only_validated_values(corpus: Path) -> None:
    finals = 0
    for dialog in babi_format.read_dialogs(corpus / "dialog-babi-task7-banking-trn.txt"):
        validated: set[str] = set()
        for line in dialog.lines:
            text = getattr(line, "bot", None)
            if text is None and line.text.endswith(" R_status valid"):
                validated.add(line.text.split()[0])
            if text and text.startswith("api_call transfer "):
                finals += 1
                assert set(text.split()[2:]) <= validated, text
    assert finals > 0


def test_cli_generates_banking(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "banking", "--out", str(tmp_path), "--seed", "1", "--dialogs", "5",
                                       "--dev-dialogs", "2", "--test-dialogs", "2"])
    assert result.exit_code == 0, result.output
    assert validate_corpus(tmp_path).ok
    result = CliRunner().invoke(main, ["stats", "--json", str(tmp_path)])
    assert '"banking"' in result.output


def test_validate_checks_the_labels_sidecar(corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "corpus"
    shutil.copytree(corpus, copy)
    sidecar = copy / "dialog-babi-task7-banking-labels.jsonl"
    lines = sidecar.read_text().splitlines()
    sidecar.write_text("\n".join(lines[1:]) + "\n")  # the first trn dialog loses its label
    assert [p.message for p in validate_corpus(copy).errors] == [
        "no label line for 1 dialog(s) of trn, e.g. dialog 0"]
    sidecar.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    assert [str(p) for p in validate_corpus(copy).errors][0].startswith(f"{sidecar}:2: not JSON")


def _played(challenge: str, intent: str = "transfer", multiple: bool = False, count: int = 30) -> list:
    return [self_play(PLAN.seed, "tst", Scenario(intent, challenge, multiple), index) for index in range(count)]


def _check_slot(action: Action) -> str:
    """The slot an API check is for (its last argument)."""
    return action.slots[-1][0]


def test_a_failed_check_lists_the_accepted_values_and_a_user_may_decline() -> None:
    acts: set[str] = set()
    listed = 0
    for index in range(60):
        actions = self_play(PLAN.seed, "trn", Scenario("transfer"), index).actions
        acts |= {a.act for a in actions}
        for call, result in zip(actions, actions[1:], strict=False):
            if result.speaker == API and ("invalid" in dict(result.slots).values()):
                slot = _check_slot(call)
                assert {fact.split()[0] for fact, value in result.slots[1:] if value == slot}, result
                listed += 1
    assert listed and {"deny", "abandon"} <= acts


def test_block_card_is_confirmed_before_the_final_call() -> None:
    for dialog in _played(NONE, "block_card"):
        acts = [a.act if a.act != "api_call" else a.value("api") for a in dialog.actions]
        if "block_card" in acts:
            assert acts[acts.index("block_card") - 2:acts.index("block_card")] == ["confirm", "affirm"]


def test_reordering_marks_the_request_for_the_last_slot_once_the_others_are_valid() -> None:
    orders = set()
    for dialog in _played("reordering"):
        (marked,) = dialog.challenge_actions
        request = dialog.actions[marked]
        valid = [_check_slot(call) for call, result in zip(dialog.actions, dialog.actions[1:], strict=False)
                 if result.speaker == API and "valid" in dict(result.slots).values()
                 and dialog.actions.index(result) < marked]
        assert request.act == "request" and set(valid) == set(SLOTS["transfer"]) - {request.value("slot")}
        assert request.value("slot") not in valid
        orders.add(request.value("slot"))
    assert orders == set(SLOTS["transfer"])  # the account can be the missing slot too (the paper's Table 5)


def test_audit_more_marks_the_checks_of_the_requested_and_a_later_slot() -> None:
    for multiple in (False, True):
        for dialog in _played("audit_more", multiple=multiple):
            assert len(dialog.challenge_actions) == (4 if multiple else 2)
            for first, second in zip(dialog.challenge_actions[::2], dialog.challenge_actions[1::2], strict=True):
                turn = dialog.actions[first - 1]
                request = dialog.actions[first - 2]
                assert turn.act == "inform_inform" and request.act == "request"
                given = [slot for slot, _ in turn.slots]
                assert given[0] == request.value("slot")
                flow = SLOTS["transfer"]
                assert flow.index(given[1]) > flow.index(given[0])  # a later slot, not one already given
                assert [_check_slot(dialog.actions[first]), _check_slot(dialog.actions[second])] == given


def test_new_api_marks_only_checks_training_never_answers_an_opening_with() -> None:
    for intent in ("transfer", "block_card"):
        for dialog in _played("new_api", intent):
            opening = dialog.actions[1]
            assert len(opening.slots) - 1 == 2  # two volunteered slots
            first_check = next(i for i, a in enumerate(dialog.actions) if a.act == "api_call")
            for marked in dialog.challenge_actions:
                assert dialog.actions[marked].act == "api_call"
                if marked == first_check:  # a first check a one-slot training opening never gets
                    assert (_check_slot(dialog.actions[marked]),) not in TRAINING_VOLUNTEERED[intent]


def test_the_plan_is_read_back_from_the_labels(corpus: Path) -> None:
    labels = read_labels(corpus / "dialog-babi-task7-banking-labels.jsonl")
    assert plan_of(labels) == replace(PLAN, dev_challenge_dialogs=PLAN.dev_dialogs)
    assert plan_of([{k: v for k, v in label.items() if k != "seed"} for label in labels]).seed == 0
    with pytest.raises(ValueError, match="2 seeds"):
        plan_of([*labels, {**labels[0], "seed": 9}])


def _played_read(challenge: str, readings: Readings, intent: str = "transfer", multiple: bool = False,
                 count: int = 30) -> list:
    return [self_play(PLAN.seed, "tst", Scenario(intent, challenge, multiple), index, readings)
            for index in range(count)]


def test_each_reading_changes_what_its_case_scores() -> None:
    """The other reading of each open detail (data/banking/readings.py) does what it names, and only there."""
    changed = 0
    for intent in ("transfer", "block_card"):
        for dialog in _played_read("new_api", Readings(new_api="one_call"), intent, count=40):
            (marked,) = dialog.challenge_actions
            call, result, after = dialog.actions[marked:marked + 3]
            assert call.value("api") == "check_" + "_".join(slot for slot, _ in dialog.actions[1].slots[1:])
            assert len(call.slots) == 3  # the api and both values
            statuses = [value for fact, value in result.slots if fact.endswith("R_status")]
            # Checked in the flow's order up to the first invalid value, whose change question follows.
            assert statuses in (["valid", "valid"], ["invalid"], ["valid", "invalid"]), result
            if statuses[-1] == "invalid":
                changed += 1
                invalid = call.slots[len(statuses)][0]
                assert after.act == "change" and after.value("slot") == invalid
                assert [a.value("slot") for a in dialog.actions[marked + 3:] if a.act == "request"][0] == invalid
            final = [a for a in dialog.actions if a.act == "api_call" and a.value("api") == intent]
            facts = " ".join(fact for a in dialog.actions if a.speaker == API for fact, _ in a.slots)
            assert all(value in facts for a in final for _, value in a.slots[1:])  # the card blocked was found
    assert changed
    for dialog in _played_read("another_slot", Readings(another_slot="any_later_slot"), count=60):
        (marked,) = dialog.challenge_actions
        asked, given = dialog.actions[marked - 2].value("slot"), _check_slot(dialog.actions[marked])
        assert SLOTS["transfer"].index(given) > SLOTS["transfer"].index(asked)
    assert any(_check_slot(d.actions[d.challenge_actions[0]]) == "amount"
               for d in _played_read("another_slot", Readings(another_slot="any_later_slot"), count=60))
    every = _played_read("reordering", Readings(reordering="every_request"))
    assert sum(map(len, (d.challenge_actions for d in every))) > len(every)
    for dialog in every:
        for marked in dialog.challenge_actions:
            assert dialog.actions[marked].act == "request" and dialog.actions[marked - 1].act != "affirm"
    for challenge in ("audit_more", "turn_compression"):
        once = _played_read(challenge, Readings(multiple_scored="second"), multiple=True)
        both = _played(challenge, multiple=True)
        assert [d.actions for d in once] == [d.actions for d in both]  # the same dialogs, half their turns scored
        assert all(set(o.challenge_actions) < set(b.challenge_actions) and 2 * len(o.challenge_actions) ==
                   len(b.challenge_actions) for o, b in zip(once, both, strict=True))
        assert all(min(b.challenge_actions) not in o.challenge_actions for o, b in zip(once, both, strict=True))
    never = [a.act for index in range(60) for a in
             self_play(PLAN.seed, "trn", Scenario("transfer"), index, Readings(declines=0)).actions]
    assert "deny" not in never and "affirm" in never


def test_readings_are_recorded_in_the_labels_and_regenerated_alike(tmp_path: Path) -> None:
    plan = replace(PLAN, train_dialogs=2, dev_dialogs=1, test_dialogs=1,
                   readings=Readings(declines=0.5, new_api="one_call"))
    generate(plan, tmp_path / "a")
    labels = read_labels(tmp_path / "a" / "dialog-babi-task7-banking-labels.jsonl")
    assert {json.dumps(label["readings"], sort_keys=True) for label in labels} == {
        '{"declines": 0.5, "new_api": "one_call"}'}
    assert plan_of(labels).readings == plan.readings
    with pytest.raises(ValueError, match="2 sets of readings"):
        plan_of([*labels, {k: v for k, v in labels[0].items() if k != "readings"}])
    result = CliRunner().invoke(main, ["generate", "banking", "--out", str(tmp_path / "b"), "--dialogs", "2",
                                       "--dev-dialogs", "1", "--test-dialogs", "1", "--seed", "3",
                                       "--reading", "declines=0.5", "--reading", "new_api=one_call"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "b" / "dialog-babi-task7-banking-tst.txt").read_bytes() == \
        (tmp_path / "a" / "dialog-babi-task7-banking-tst.txt").read_bytes()
    for bad, said in (("new_api=both", "expected one of separate_checks, one_call"), ("declines=2", "between 0 and 1"),
                      ("speed=1", "NAME one of declines")):
        result = CliRunner().invoke(main, ["generate", "banking", "--out", str(tmp_path / "c"), "--reading", bad])
        assert result.exit_code == 2 and said in result.output, result.output
        assert not (tmp_path / "c").exists()
    sidecar = tmp_path / "a" / "dialog-babi-task7-banking-labels.jsonl"
    sidecar.write_text(sidecar.read_text().replace('"one_call"', '"two_calls"', 1))
    with pytest.raises(FormatError, match=r"labels.jsonl:1: .*readings"):
        read_labels(sidecar)


def test_swapped_thirds_train_on_the_development_wordings_and_choose_on_the_training_ones(tmp_path: Path) -> None:
    """A second held-out set of wordings: trn realised with the development third of the templates, dev and dev-OOP
    with the training third; the tests, the flows and the candidates as in the usual corpus; the plan read back."""
    plan = replace(PLAN, train_dialogs=4, dev_dialogs=2, test_dialogs=2)
    generate(plan, tmp_path / "usual")
    result = CliRunner().invoke(main, ["generate", "banking", "--out", str(tmp_path / "swapped"), "--seed", "3",
                                       "--dialogs", "4", "--dev-dialogs", "2", "--test-dialogs", "2",
                                       "--swapped-thirds"])
    assert result.exit_code == 0, result.output
    name = "dialog-babi-task7-banking-{}.txt".format
    for kept in ("tst", "tst-OOT", "candidates"):
        assert (tmp_path / "swapped" / name(kept)).read_bytes() == (tmp_path / "usual" / name(kept)).read_bytes()
    thirds = template_thirds()

    def share(split: str, third: str) -> float:  # of the split's user turns, those a template of the third words
        wordings = [re.compile(re.sub(r"\\\{\w+\\\}", r"\\S+", re.escape(t))) for form in USER_TEMPLATES
                    for t in thirds[form][third]]
        utterances = _user_utterances(tmp_path / "swapped" / name(split))
        return sum(any(w.fullmatch(u) for w in wordings) for u in utterances) / len(utterances)

    assert share("trn", "dev") == 1.0 > share("trn", "trn")
    assert share("dev", "trn") == 1.0 > share("dev", "dev")
    assert share("dev-OOP", "trn") > 0.5 > share("dev-OOP", "dev")  # the rest: compressed turns, their own joiners
    labels = read_labels(tmp_path / "swapped" / "dialog-babi-task7-banking-labels.jsonl")
    assert plan_of(labels) == replace(plan, dev_challenge_dialogs=2, swapped_thirds=True)
    assert not plan_of(read_labels(tmp_path / "usual" / "dialog-babi-task7-banking-labels.jsonl")).swapped_thirds
    with pytest.raises(ValueError, match="swapped template thirds and the usual ones"):
        plan_of([*labels, {k: v for k, v in labels[0].items() if k != "swapped_thirds"}])
