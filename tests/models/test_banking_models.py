"""SMN and MMN on a small banking corpus: labels reach the examples, the selector routes, Tables 8-9 are written."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.banking_corpus import BankingPlan, generate, read_labels
from data.layout import discover
from models.banking import (
    SELECTOR_ACTION,
    _selector_examples,
    labelled_examples,
    run_banking_benchmark,
)


@pytest.fixture(scope="module")
def banking(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("banking")
    generate(BankingPlan(seed=1, train_dialogs=15, dev_dialogs=3, test_dialogs=3), out)
    return out, discover(out)[7]


def test_examples_carry_intent_template_split_and_challenge_turns(banking) -> None:
    out, files = banking
    labels = read_labels(out / "dialog-babi-task7-banking-labels.jsonl")
    tests = labelled_examples(files, "tst-OOT", labels)
    assert {e.templates for e in tests} == {"OOT"}
    marked = [e for e in tests if e.is_challenge_turn]
    assert marked and all(e.challenge != "none" for e in marked)
    # a turn-compression challenge turn answers "yes , <new value>" with the validation API call
    compression = [e for e in marked if e.challenge == "turn_compression"]
    assert compression and all(e.example.answer.startswith("api_call check_") for e in compression)
    trn = labelled_examples(files, "trn", labels)
    selector = _selector_examples(trn)
    assert len(selector) == 15 * 6
    assert {e.answer for e in selector} == {SELECTOR_ACTION.format(intent=i) for i in
                                            ("transfer", "cancel_transfer", "block_card", "transaction_history",
                                             "account_balance", "account_limit")}


def test_benchmark_writes_tables_8_and_9(banking, tmp_path: Path) -> None:
    _, files = banking
    results = run_banking_benchmark(files, tmp_path / "banking.md", epochs=1, progress=lambda _: None)
    text = (tmp_path / "banking.md").read_text()
    assert "Table 8" in text and "Table 9" in text and "| Turn Comp. OOT |" in text
    assert results.table8[("none", "IT", "SMN")] is not None and results.table8[("average", "OOT", "MMN")] is not None
    assert results.turns[("turn_compression", "IT", True)] >= 2 * 3  # twice per dialog, 3 dialogs
    assert (tmp_path / "banking.csv").read_text().startswith("table,test_case")
