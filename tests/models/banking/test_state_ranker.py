"""The state ranker's tracked facts, computed in TensorFlow ops from a raw dialog, and its training end to end on a
small corpus (the SavedModel ranks as training scored dev)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from models.banking.slots import SlotLexicon
from models.banking.state_ranker import StateConfig, StateFeatures, train_state_ranker
from models.examples import TaskData
from models.methods import best_answers
from models.serving.ranker import SavedModelRanker
from tests.models.banking.test_slots import _examples

CANDIDATES = ["api_call check_partner megan", "api_call check_partner anna", "api_call check_account savings",
              "which account would you like to use ?", "who would you like to send the money to ?",
              "api_call check_amount savings 100", "api_call end_call"]


def _features(memory: list[str], speakers: list[str], query: str) -> tuple[StateFeatures, dict[str, np.ndarray]]:
    lexicon = SlotLexicon.learn(_examples())
    features = StateFeatures(lexicon, CANDIDATES, ["yes", ",", "to", "<partner>"])
    out = features(tf.constant([memory]), tf.constant([speakers]), tf.constant([query]))
    return features, {key: value.numpy()[0] for key, value in out.items()}


def test_pending_values_and_the_slot_state_come_from_the_dialogs_own_calls_and_results() -> None:
    memory = ["i want to send money", "which account would you like to use ?", "my savings account",
              "api_call check_account savings", "savings R_status valid", "who would you like to send the money to ?",
              "anna", "api_call check_partner anna", "anna R_status invalid"]
    speakers = ["user", "bot", "user", "bot", "user", "bot", "user", "bot", "user"]
    features, out = _features(memory, speakers, "yes , to megan")
    candidate = out["candidate"]  # [C, F]: every value / some value pending, in query, in last call, in results...
    megan, anna, savings = (CANDIDATES.index(c) for c in CANDIDATES[:3])
    assert candidate[megan, :8].tolist() == [1, 1, 0, 0] * 2  # said in this turn, never checked
    assert candidate[anna, :8].tolist() == [0, 0, 1, 1] * 2  # checked last, its result since
    assert candidate[savings, :8].tolist() == [0, 0, 0, 0] * 2
    both = CANDIDATES.index("api_call check_amount savings 100")  # savings checked long ago, 100 never said
    assert candidate[both, :8].tolist() == [0] * 8
    kinds = SlotLexicon.learn(_examples()).kinds
    assert candidate[anna, 8 + kinds.index("R_status invalid")] == 1
    assert candidate[savings, 8 + kinds.index("R_status valid")] == 1
    # The request for the account carries its slot type's facts: the account's latest result is valid.
    request = CANDIDATES.index("which account would you like to use ?")
    type_kinds = candidate[request, 8 + len(kinds) + 2:8 + 2 * len(kinds) + 2]
    assert type_kinds[kinds.index("R_status valid")] == 1 and candidate[request, -3:].tolist() == [0, 1, 0]
    assert features.templates[out["previous"] - 1] == "api_call check_partner <partner>"
    assert out["query_words"].tolist() == [1, 2, 3, 4]  # "yes , to <partner>": the query delexicalised
    assert out["last_line"][-3:].tolist() == [1, 0, 0]  # the user spoke
    history = out["history_words"]
    assert history[history > 0].tolist() == [3]  # "to" (send money to): earlier words, not entities (anna)


def test_a_value_said_again_after_its_check_is_pending_again() -> None:
    memory = ["to megan", "api_call check_partner megan", "megan R_status invalid",
              "the partner name you gave is not valid , would you like to change it ?"]
    _, before = _features(memory, ["user", "bot", "user", "bot"], "yes")
    _, again = _features(memory, ["user", "bot", "user", "bot"], "yes , megan")
    megan = CANDIDATES.index("api_call check_partner megan")
    assert before["candidate"][megan, 0] == 0 and again["candidate"][megan, 0] == 1


def test_training_exports_a_model_that_ranks_as_training_scored(banking, tmp_path: Path) -> None:
    _, files = banking
    task = TaskData.load(files)
    summary = train_state_ranker(task, tmp_path / "model", StateConfig(epochs=1))
    dev = task.split("dev")
    answers = best_answers(SavedModelRanker(tmp_path / "model"), dev)
    assert round(100.0 * np.mean([a == e.answer for a, e in zip(answers, dev, strict=True)]), 2) == \
        summary["dev_per_response_accuracy"]


def test_an_unknown_feature_group_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown feature groups \\['filling'\\]"):
        StateConfig(removed=("filling",))
