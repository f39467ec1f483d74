"""SMN and MMN on a small banking corpus: labels reach the examples, the selector is trained on the opening turns."""

from __future__ import annotations

from data.banking.labels import read_labels
from models.banking.networks import SELECTOR_ACTION, _selector_examples, labelled_examples
from models.examples import TaskData


def test_examples_carry_intent_template_split_and_challenge_turns(banking) -> None:
    out, files = banking
    task = TaskData.load(files)
    labels = read_labels(out / "dialog-babi-task7-banking-labels.jsonl")
    tests = labelled_examples(task, "tst-OOT", labels)
    assert {e.templates for e in tests} == {"OOT"}
    marked = [e for e in tests if e.is_challenge_turn]
    assert marked and all(e.challenge != "none" for e in marked)
    # a turn-compression challenge turn answers "yes , <new value>" with the validation API call
    compression = [e for e in marked if e.challenge == "turn_compression"]
    assert compression and all(e.example.answer.startswith("api_call check_") for e in compression)
    trn = labelled_examples(task, "trn", labels)
    selector = _selector_examples(trn)
    assert len(selector) == 15 * 6
    assert {e.answer for e in selector} == {SELECTOR_ACTION.format(intent=i) for i in
                                            ("transfer", "cancel_transfer", "block_card", "transaction_history",
                                             "account_balance", "account_limit")}
