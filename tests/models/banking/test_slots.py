"""The state ranker's lexicon, learned from training examples alone: slot types by argument positions sharing
values, result kinds, and the slot each request asks for."""

from __future__ import annotations

from models.banking.slots import MAX_CLOSED_VALUES, NO_KIND, SlotLexicon
from models.examples import TurnExample


def _examples() -> list[TurnExample]:
    """Two small dialogs, as turn examples (answers and the following queries are what the lexicon reads)."""
    dialogs = [
        [("i want to send money", "which account would you like to use ?"),
         ("my savings account", "api_call check_account savings"),
         ("<SILENCE>", "who would you like to send the money to ?"),
         ("to megan", "api_call check_partner megan"),
         ("<SILENCE>", "api_call check_amount savings 100"),
         ("<SILENCE>", "api_call transfer savings megan 100")],
        [("pay anna 50 from joint", "api_call transfer joint anna 50"),
         ("<SILENCE>", "which account would you like to use ?"),
         ("the joint one", "api_call check_account joint")],
    ]
    results = ["savings R_status valid", "megan R_status invalid", "savings R_balance 9250", "joint R_balance 1250"]
    examples = []
    for d, turns in enumerate(dialogs):
        memory: list[str] = []
        for t, (query, answer) in enumerate(turns):
            examples.append(TurnExample(f"7:trn:{d}", "banking", "trn", t, tuple(memory), ("user",) * len(memory),
                                        query, answer))
            memory += [query, answer, *results[2 * d:2 * d + 2]]
    return examples


def test_types_merge_the_positions_that_share_a_value() -> None:
    lexicon = SlotLexicon.learn(_examples())
    assert lexicon.types["savings"] == lexicon.types["joint"] == "account"  # joint only at transfer:1
    assert lexicon.types["megan"] == lexicon.types["anna"] == "partner"
    assert lexicon.types["100"] == lexicon.types["50"] == "amount"
    assert lexicon.template("api_call transfer joint anna 50") == "api_call transfer <account> <partner> <amount>"


def test_closed_attributes_have_a_kind_per_value_and_open_ones_type_their_values() -> None:
    balances = tuple(f"savings R_balance {1000 + 250 * i}" for i in range(MAX_CLOSED_VALUES + 1))
    lexicon = SlotLexicon.learn([*_examples(), TurnExample("7:trn:9", "banking", "trn", 1, balances,
                                                           ("user",) * len(balances), "thanks", "api_call end_call")])
    assert lexicon.kinds[0] == NO_KIND
    assert lexicon.kind("R_status", "valid") != lexicon.kind("R_status", "invalid") != 0
    assert lexicon.kind("R_balance", "9250") == lexicon.kind("R_balance", "1") == lexicon.kinds.index("R_balance")
    assert lexicon.kind("R_unknown", "x") == 0
    assert lexicon.types["1250"] == "balance" and lexicon.types["savings"] == "account"  # an API's type stays


def test_a_request_asks_for_the_type_its_next_user_turn_gives() -> None:
    lexicon = SlotLexicon.learn(_examples())
    assert lexicon.request_types == {"which account would you like to use ?": "account",
                                     "who would you like to send the money to ?": "partner"}
