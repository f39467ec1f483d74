"""The template ranker in TensorFlow ops: the filling features equal the Python definition, the chosen template's
candidates come first, API calls are one action."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from data.babi.generation import GenerationPlan, generate
from data.layout import discover
from models.babi.template.filling import (
    FILL_FEATURES,
    DialogContext,
    FillerBatches,
    candidate_features,
    candidate_features_of,
)
from models.babi.template.graph import FillingFeatures, calls_chosen, chosen_first
from models.babi.template.lexicon import EntityLexicon
from models.examples import TaskData, TurnExample, pad_batch
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


@pytest.fixture(scope="module")
def task5(tmp_path_factory: pytest.TempPathFactory) -> TaskData:
    """Generated task 5: KB results, restaurants on offer, OOV restaurants."""
    out = tmp_path_factory.mktemp("task5")
    generate(GenerationPlan(seed=3, dialogs_per_split=6, tasks=(5,)), out, runner="local")
    return TaskData.load(discover(out)[5])


def _agree(lexicon: EntityLexicon, candidates: Sequence[str], example: TurnExample) -> np.ndarray:
    """The ops' features of every candidate for ``example``, checked equal to the Python definition's."""
    expected = np.stack([candidate_features(lexicon, DialogContext.of(lexicon, example), c) for c in candidates])
    filling = FillingFeatures(lexicon.types, lexicon.attributes, candidates, FILL_FEATURES)
    got = candidate_features_of(filling, [example], np.arange(len(candidates), dtype=np.int32)[np.newaxis])
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)
    return expected


def test_filling_features_in_tensorflow_ops_equal_the_python_definition(task6, task5: TaskData) -> None:
    """The SavedModel's features (TensorFlow ops over a batch) give exactly ``candidate_features`` of every
    candidate, on DSTC2-like dialogs and on generated task 5."""
    files6, trn6, lexicon6 = task6
    lexicon5 = EntityLexicon.learn(task5.facts, [e.answer for e in task5.split("trn")])
    checked = 0
    for lexicon, candidates, examples in (
            (lexicon6, TaskData.load(files6).candidates, trn6),
            (lexicon5, task5.candidates, task5.split("trn")[::5] + task5.split("tst-OOV")[::5])):
        filling = FillingFeatures(lexicon.types, lexicon.attributes, candidates, FILL_FEATURES)
        ids = np.broadcast_to(np.arange(len(candidates), dtype=np.int32), (len(examples), len(candidates)))
        got = candidate_features_of(filling, examples, ids)
        # Sparsely, as the SavedModel scores every candidate: the features without dialog, and those touched.
        static, pairs, touched = (t.numpy() for t in filling.every_candidate(*map(tf.constant, pad_batch(examples))))
        dense = np.broadcast_to(static, got.shape).copy()
        dense[pairs[:, 0], pairs[:, 1]] = touched
        np.testing.assert_allclose(dense, got, rtol=1e-6)
        assert len(candidates) < 1000 or len(pairs) < got.shape[0] * got.shape[1] / 8  # task 5: few touched
        for example, features in zip(examples, got, strict=True):
            context = DialogContext.of(lexicon, example)
            expected = np.stack([candidate_features(lexicon, context, c) for c in candidates])
            np.testing.assert_allclose(features, expected, rtol=1e-6, err_msg=example.dialog_id)
            checked += len(candidates)
    assert checked > 100_000


def test_the_filler_batches_hold_the_same_features(task5: TaskData) -> None:
    """Each training turn's gold-template candidates, with the features the ops give them, in one shape."""
    lexicon5 = EntityLexicon.learn(task5.facts, [e.answer for e in task5.split("trn")])
    templates: dict[str, list[str]] = {}
    for candidate in task5.candidates:
        templates.setdefault(lexicon5.delexicalise(candidate), []).append(candidate)
    trained = [e for e in task5.split("trn") if len(templates[lexicon5.delexicalise(e.answer)]) > 1]
    gold = [lexicon5.delexicalise(e.answer) for e in trained]
    filling = FillingFeatures(lexicon5.types, lexicon5.attributes, task5.candidates, FILL_FEATURES)
    batches = FillerBatches.of(filling, templates, task5.candidates, trained, gold)
    index = {c: i for i, c in enumerate(task5.candidates)}
    for b in range(len(batches)):
        (inputs, answers), rows = batches[b], batches.order[b * batches.batch_size:(b + 1) * batches.batch_size]
        ids = np.full(inputs["mask"].shape, len(task5.candidates), np.int32)
        for j, r in enumerate(rows):
            ids[j, :len(templates[gold[r]])] = [index[c] for c in templates[gold[r]]]
            assert templates[gold[r]][answers[j]] == trained[r].answer
        expected = candidate_features_of(filling, [trained[r] for r in rows], ids)
        np.testing.assert_allclose(inputs["features"], expected, rtol=1e-6)
        np.testing.assert_array_equal(inputs["mask"], ids < len(task5.candidates))
        assert inputs["features"].shape[1] == max(len(group) for group in templates.values())  # one shape


def test_kb_results_that_contradict_the_kb_file_count_newest_first(task6) -> None:
    """A restaurant moved, another's cuisine restated: the dialog's newest line wins, in the ops as in Python."""
    files6, trn6, lexicon6 = task6
    memory = list(trn6[4].memory)
    at = memory.index("the_elm R_rating 9")
    memory[at:at] = ["the_elm R_location south", "the_ash R_cuisine thai"]
    moved = replace(trn6[4], memory=tuple(memory), memory_speaker=trn6[4].memory_speaker[:at] + ("user", "user")
                    + trn6[4].memory_speaker[at:])
    assert DialogContext.of(lexicon6, moved).attribute(lexicon6, "the_elm", "location") == "south"
    _agree(lexicon6, TaskData.load(files6).candidates, moved)


def test_a_restaurant_rated_twice_counts_its_newest_line_and_a_tie_ranks_the_newer_first(task6) -> None:
    files6, _, lexicon6 = task6
    candidates = TaskData.load(files6).candidates
    rated = TurnExample("d", "dstc2", "trn", 1, ("cheap food", "api_call R_cuisine R_location cheap",
                                                 "the_oak R_rating 9", "the_elm R_rating 5", "the_oak R_rating 5"),
                        ("user", "bot", "user", "user", "user"), "anything else", "")
    expected = _agree(lexicon6, candidates, rated)
    offers = {name: candidates.index(f"{name} is a nice restaurant in the north of town serving thai food")
              for name in ("the_oak", "the_elm")}
    ranks = {name: expected[c, FILL_FEATURES.index("rating_rank")] for name, c in offers.items()}
    assert ranks == pytest.approx({"the_oak": 1.0, "the_elm": 1 / 2})
    assert expected[offers["the_oak"], FILL_FEATURES.index("best_not_offered")] == 1.0


def test_a_restaurant_on_offer_has_the_attributes_of_the_kb_file(task6) -> None:
    """Attributes the dialog never stated, known from the KB file only."""
    files6, _, lexicon6 = task6
    offer = TurnExample("d", "dstc2", "trn", 1, ("the_oak is a nice place",), ("bot",), "phone", "")
    expected = _agree(lexicon6, TaskData.load(files6).candidates, offer)
    assert expected[:, FILL_FEATURES.index("attribute_of_on_offer")].any()


def test_the_chosen_templates_candidates_come_first_whatever_their_scores() -> None:
    in_chosen = tf.constant([[False, True, False, True, True], [True, False, False, False, False]])
    fill = tf.constant([[0.0, -9.0, 5.0, -7.0, -9.0], [-50.0, 1.0, 2.0, 3.0, 4.0]])
    scores = tf.constant([[-1.0, -20.0, -2.0, -20.0, -20.0], [-90.0, -3.0, -1.0, -2.0, -4.0]])
    assert chosen_first(in_chosen, fill, scores, 4).numpy().tolist() == [[3, 1, 4, 0], [0, 2, 3, 1]]


def test_api_calls_are_one_action_whose_probabilities_add_up() -> None:
    """Two call templates at 0.3 each beat a slot question at 0.4 (neither alone would); the bias multiplies the
    calls' probability by e (0.3 e > 0.7)."""
    is_call = tf.constant([True, True, False, False])
    p = tf.math.log(tf.constant([[0.3, 0.3, 0.4, 0.0], [0.2, 0.1, 0.7, 0.0], [0.05, 0.05, 0.3, 0.6]]) + 1e-9)
    assert calls_chosen(p, is_call, 0.0).numpy().tolist() == [True, False, False]
    assert calls_chosen(p, is_call, 1.0).numpy().tolist() == [True, True, False]
    assert not calls_chosen(p, tf.zeros([4], tf.bool), 1.0).numpy().any()  # no call template: never a call
