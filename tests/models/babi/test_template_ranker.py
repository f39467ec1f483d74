"""The template ranker: lexicon learned from data, delexicalised examples, filling features, and a small fit."""

from __future__ import annotations

from dataclasses import replace
from itertools import zip_longest
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from data.babi.generation import GenerationPlan, generate
from data.facts import corpus_facts
from data.layout import discover
from models.babi.dialog_state import DialogStateTracker
from models.babi.template.filling import (
    FILL_FEATURES,
    POLICY_FEATURES,
    DialogContext,
    FillerBatches,
    candidate_features,
    candidate_features_of,
    value_features,
)
from models.babi.template.graph import FillingFeatures, calls_chosen, chosen_first
from models.babi.template.lexicon import EntityLexicon, template_example, template_examples
from models.babi.template.ranker import LEARNED_FILL_DEPTH, RankedFilling, TemplateRanker
from models.examples import TaskData, TurnExample, pad_batch, split_examples
from models.features import Featurizer
from models.methods import best_answers
from models.metrics import accuracy_report
from models.serving.ranker import SavedModelRanker
from models.training import TrainConfig, featurize
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


@pytest.fixture(scope="module")
def task6():
    files = discover(FIXTURE)[6]
    trn = split_examples(files, "trn")
    return files, trn, EntityLexicon.learn(corpus_facts(files), [e.answer for e in trn])


def test_lexicon_types_come_from_kb_results_and_api_call_positions(task6) -> None:
    _, _, lexicon = task6
    assert lexicon.types["the_oak"] == "name" and lexicon.types["thai"] == "cuisine"
    assert lexicon.types["north"] == "location" and lexicon.types["the_oak_phone"] == "phone"
    assert lexicon.types["korean"] == "cuisine"  # only ever an API-call argument (no result)
    assert "4" not in lexicon.types  # ratings stay words
    template = lexicon.delexicalise("The phone number of the_oak is the_oak_phone")
    assert template == "The phone number of <name> is <phone>"


def test_template_example_keeps_only_rating_lines_of_results(task6) -> None:
    _, trn, lexicon = task6
    example = template_example(lexicon, trn[3])  # the offer after the API call
    assert example.memory[-2:] == ("<name> R_rating 4", "<name> R_rating 9")
    assert example.answer == "<name> is a nice restaurant in the <location> of town serving <cuisine> food"


def test_context_knows_the_restaurant_on_offer_and_the_best_not_yet_offered(task6) -> None:
    _, trn, lexicon = task6
    context = DialogContext.of(lexicon, trn[4])  # "is there anything else" after the_elm was offered
    assert context.on_offer == "the_elm" and context.results == {"the_oak": 4, "the_elm": 9}
    best = FILL_FEATURES.index("best_not_offered")
    assert value_features(lexicon, context, "name", "the_oak", None)[best] == 1.0
    assert value_features(lexicon, context, "name", "the_elm", None)[best] == 0.0
    own = FILL_FEATURES.index("own_attribute")
    assert value_features(lexicon, context, "location", "north", "the_oak")[own] == 1.0


def test_learns_to_offer_restaurants_in_rating_order(tmp_path: Path) -> None:
    generate(GenerationPlan(seed=5, dialogs_per_split=40, tasks=(3,)), tmp_path / "data", runner="local")
    task = TaskData.load(discover(tmp_path / "data")[3])
    trn, dev = task.split("trn"), task.split("dev")
    config = TrainConfig(hops=2, embedding_dim=32, learning_rate=0.01, epochs=8)
    ranker, summary = TemplateRanker.fit(task, config, tmp_path / "model", fill_epochs=20)
    assert summary["templates"] < len(set(e.answer for e in trn))
    accuracy = accuracy_report(dev, best_answers(ranker, dev))["per_response_accuracy"]
    assert accuracy >= 95.0, summary


def test_an_ablated_filler_reads_only_the_features_left(tmp_path: Path) -> None:
    generate(GenerationPlan(seed=5, dialogs_per_split=10, tasks=(3,)), tmp_path / "data", runner="local")
    task = TaskData.load(discover(tmp_path / "data")[3])
    config = TrainConfig(hops=1, embedding_dim=8, epochs=1)
    ranker, summary = TemplateRanker.fit(task, config, tmp_path / "model", fill_epochs=1)
    assert ranker.features == FILL_FEATURES and summary["filler"]["features"] == list(FILL_FEATURES)
    ablated, fill = ranker.with_filler(task.split("trn"), [f for f in FILL_FEATURES if f not in POLICY_FEATURES],
                                       epochs=1)
    assert ablated.template_model is ranker.template_model and not set(POLICY_FEATURES) & set(ablated.features)
    assert ablated.filler.get_layer("features").output.shape[-1] == len(FILL_FEATURES) - 3 and fill["examples"] > 0
    dev = task.split("dev")
    assert [len(row) for row in ablated.rank(dev, 1)] == [1] * len(dev)
    with pytest.raises(ValueError, match="filling features must be some of"):
        ranker.with_filler(task.split("trn"), ["no_such_feature"])

    class Reversed:  # a learned ranker's ranking, here every candidate in reverse order
        def rank(self, examples, k=10):
            return [list(reversed(task.candidates))[:k] for _ in examples]

    chosen = ranker.templates_of(dev)
    filled = RankedFilling(ranker, Reversed()).rank(dev, 2)
    for template, row in zip(chosen, filled, strict=True):
        group = ranker.templates.get(template, [])
        expected = [c for c in list(reversed(task.candidates))[:LEARNED_FILL_DEPTH] if c in group][:2] or [template]
        assert row == expected


def test_filling_features_in_tensorflow_ops_equal_the_python_definition(task6, tmp_path: Path) -> None:
    """The SavedModel's features (TensorFlow ops over a batch) give exactly ``candidate_features`` of every
    candidate, on DSTC2-like dialogs and on generated task 5 (KB results, restaurants on offer, OOV restaurants)."""
    generate(GenerationPlan(seed=3, dialogs_per_split=6, tasks=(5,)), tmp_path, runner="local")
    task5 = TaskData.load(discover(tmp_path)[5])
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
    # The filler's training batches hold the same features for each turn's gold-template candidates.
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
    # KB results that contradict the KB file (newest line first): a restaurant moved, another's cuisine restated.
    memory = list(trn6[4].memory)
    at = memory.index("the_elm R_rating 9")
    memory[at:at] = ["the_elm R_location south", "the_ash R_cuisine thai"]
    moved = replace(trn6[4], memory=tuple(memory), memory_speaker=trn6[4].memory_speaker[:at] + ("user", "user")
                    + trn6[4].memory_speaker[at:])
    candidates = TaskData.load(files6).candidates
    context = DialogContext.of(lexicon6, moved)
    assert context.attribute(lexicon6, "the_elm", "location") == "south"
    expected = np.stack([candidate_features(lexicon6, context, c) for c in candidates])
    filling = FillingFeatures(lexicon6.types, lexicon6.attributes, candidates, FILL_FEATURES)
    got = candidate_features_of(filling, [moved], np.arange(len(candidates), dtype=np.int32)[np.newaxis])
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)
    # Ratings: a restaurant rated twice (its newest line counts), and a tie (the newer line ranks first).
    rated = TurnExample("d", "dstc2", "trn", 1, ("cheap food", "api_call R_cuisine R_location cheap",
                                                 "the_oak R_rating 9", "the_elm R_rating 5", "the_oak R_rating 5"),
                        ("user", "bot", "user", "user", "user"), "anything else", "")
    context = DialogContext.of(lexicon6, rated)
    expected = np.stack([candidate_features(lexicon6, context, c) for c in candidates])
    offers = {name: candidates.index(f"{name} is a nice restaurant in the north of town serving thai food")
              for name in ("the_oak", "the_elm")}
    ranks = {name: expected[c, FILL_FEATURES.index("rating_rank")] for name, c in offers.items()}
    assert ranks == pytest.approx({"the_oak": 1.0, "the_elm": 1 / 2})
    assert expected[offers["the_oak"], FILL_FEATURES.index("best_not_offered")] == 1.0
    got = candidate_features_of(filling, [rated], np.arange(len(candidates), dtype=np.int32)[np.newaxis])
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)
    # A restaurant on offer whose attributes the dialog never stated (known from the KB file only).
    offer = TurnExample("d", "dstc2", "trn", 1, ("the_oak is a nice place",), ("bot",), "phone", "")
    context = DialogContext.of(lexicon6, offer)
    candidates = TaskData.load(files6).candidates
    expected = np.stack([candidate_features(lexicon6, context, c) for c in candidates])
    assert expected[:, FILL_FEATURES.index("attribute_of_on_offer")].any()
    filling = FillingFeatures(lexicon6.types, lexicon6.attributes, candidates, FILL_FEATURES)
    got = candidate_features_of(filling, [offer], np.arange(len(candidates), dtype=np.int32)[np.newaxis])
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)


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


def reference_rank(ranker: TemplateRanker, examples: list[TurnExample]) -> list[dict[str, float]]:
    """The ranking as the Python definition gives it: the template model's best template on
    ``template_example``; its candidates with the filler's score of ``candidate_features``. With a tracked state
    the API-call templates are one action, taken when their summed probability times exp(call_bias) beats the
    best other template; then the candidate whose arguments are the state's (each value, else an R_ word) is
    first (score inf), else the best call template is filled."""
    inputs = featurize(Featurizer(ranker.template_spec), template_examples(ranker.lexicon, ranker.state, examples))
    logits = np.asarray(ranker.template_model.predict_on_batch(inputs), dtype=np.float64)
    templates = ranker.template_spec.candidates
    is_call = np.array([t.startswith("api_call") for t in templates])
    states = values = None
    if ranker.state is not None:
        memory, speaker, query = pad_batch(examples)
        states, values, _ = (t.numpy() for t in DialogStateTracker(ranker.state).state(
            tf.constant(memory, tf.string), tf.constant(speaker, tf.string), tf.constant(query, tf.string)))
    columns = [FILL_FEATURES.index(f) for f in ranker.features]
    rows = []
    for i, (example, row) in enumerate(zip(examples, logits, strict=True)):
        best, first = int(row.argmax()), None
        if states is not None and ranker.call_bias is not None:
            log_p = row - row.max() - np.log(np.exp(row - row.max()).sum())
            calls = log_p[is_call]
            if calls.size and np.log(np.exp(calls).sum()) + ranker.call_bias > log_p[~is_call].max():
                asked = ["api_call", *(v.decode() if s == 1 else "R_"
                                       for s, v in zip(states[i], values[i], strict=True))]
                first = next((c for c in ranker.candidates if len(c.split()) >= len(asked) and all(
                    w == a or (a == "R_" and w.startswith("R_"))
                    for w, a in zip_longest(c.split(), asked, fillvalue="R_"))), None)
                best = templates.index(ranker.lexicon.delexicalise(first)) if first else \
                    int(np.where(is_call, row, -np.inf).argmax())
            else:
                best = int(np.where(is_call, -np.inf, row).argmax())
        group = ranker.templates[templates[best]]
        context = DialogContext.of(ranker.lexicon, example)
        x = np.stack([candidate_features(ranker.lexicon, context, c)[columns] for c in group])[np.newaxis]
        scores = np.asarray(ranker.filler.predict_on_batch({"features": x, "mask": np.ones(x.shape[:2])}))[0]
        rows.append({c: np.inf if c == first else score for c, score in zip(group, scores.tolist(), strict=True)})
    return rows


def test_the_saved_model_answers_as_the_python_definition_on_every_task(task6, tmp_path: Path) -> None:
    """One model over generated tasks 1-5 (they share candidates) and one on DSTC2-like dialogs: the exported
    SavedModel, called as TF Serving would, answers every turn of every split as the ranker in memory and as the
    Python definition (same template, same filled response)."""
    generate(GenerationPlan(seed=4, dialogs_per_split=4), tmp_path / "data", runner="local")
    corpus = discover(tmp_path / "data")
    tasks = {n: TaskData.load(corpus[n]) for n in (1, 2, 3, 4, 5)}
    config = TrainConfig(hops=1, embedding_dim=16, epochs=2)
    files6, trn6, _ = task6
    task6_data = TaskData.load(files6)
    cases = [
        (tasks[5].candidates, tasks[5].facts, [e for t in tasks.values() for e in t.split("trn")],
         [e for t in tasks.values() for e in t.split("dev")],
         [e for t in tasks.values() for split in ("dev", "tst", "tst-OOV") for e in t.split(split)]),
        (task6_data.candidates, task6_data.facts, trn6, task6_data.split("dev"), trn6 + task6_data.split("dev")),
    ]
    for n, (candidates, facts, trn, dev, checked) in enumerate(cases):
        out = tmp_path / f"model{n}"
        ranker, _ = TemplateRanker.fit_examples(candidates, facts, trn, dev, config, out, fill_epochs=2)
        saved = SavedModelRanker(out).rank(checked)
        assert saved == ranker.rank(checked)
        memory, speaker, query = pad_batch(checked[:256])
        scores = ranker.module.serve_speakers(memory=tf.constant(memory), memory_speaker=tf.constant(speaker),
                                              query=tf.constant(query))["scores"]
        assert np.isfinite(scores.numpy()).all()  # the state's call goes first; its score stays the model's
        reference = reference_rank(ranker, checked)
        assert sum(np.inf in expected.values() for expected in reference) > 0, n  # the state's call was made
        for row, expected in zip(saved, reference, strict=True):
            # The best template's candidates first, best filled first (scores equal to float rounding may swap).
            assert len(row) == 10 and expected[row[0]] >= max(expected.values()) - 1e-5
            head = row[:len(expected)]
            assert set(head) <= expected.keys()
            assert all(expected[a] >= expected[b] - 1e-5 for a, b in zip(head, head[1:], strict=False)), head
        if n == 1:  # the ablation on DSTC2-like dialogs: API calls ranked as templates like the others
            plain = replace(ranker, call_bias=None)
            for row, expected in zip(plain.rank(checked), reference_rank(plain, checked), strict=True):
                assert expected[row[0]] >= max(expected.values()) - 1e-5 and np.inf not in expected.values()
