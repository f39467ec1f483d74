"""The template ranker trained: it learns the restaurant policy, its ablations read only the features left, and the
SavedModel answers as the Python definition."""

from __future__ import annotations

from dataclasses import replace
from itertools import zip_longest
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from data.babi.generation import GenerationPlan, generate
from data.layout import discover
from models.babi.dialog_state import DialogStateTracker
from models.babi.template.config import TemplateConfig
from models.babi.template.filling import (
    FILL_FEATURES,
    POLICY_FEATURES,
    DialogContext,
    candidate_features,
)
from models.babi.template.lexicon import template_examples
from models.babi.template.ranker import LEARNED_FILL_DEPTH, RankedFilling, TemplateRanker
from models.examples import TaskData, TurnExample, pad_batch
from models.features import Featurizer
from models.methods import best_answers
from models.metrics import accuracy_report
from models.serving.ranker import SavedModelRanker
from models.training import featurize
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


@pytest.fixture(scope="module")
def task3(tmp_path_factory: pytest.TempPathFactory) -> tuple[TaskData, TemplateRanker, dict]:
    """A template ranker trained on generated task 3, with every filling feature (trained once for the file)."""
    root = tmp_path_factory.mktemp("task3")
    generate(GenerationPlan(seed=5, dialogs_per_split=40, tasks=(3,)), root / "data", runner="local")
    task = TaskData.load(discover(root / "data")[3])
    config = TemplateConfig(hops=2, embedding_dim=32, learning_rate=0.01, epochs=8)
    ranker, summary = TemplateRanker.fit(task, config, root / "model", fill_epochs=20)
    return task, ranker, summary


def test_learns_to_offer_restaurants_in_rating_order(task3) -> None:
    task, ranker, summary = task3
    trn, dev = task.split("trn"), task.split("dev")
    assert summary["templates"] < len(set(e.answer for e in trn))
    accuracy = accuracy_report(dev, best_answers(ranker, dev))["per_response_accuracy"]
    assert accuracy >= 95.0, summary


def test_an_ablated_filler_reads_only_the_features_left(task3) -> None:
    task, ranker, summary = task3
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
    chosen = []  # each example's (group, first): its chosen template's candidates, the one put first
    for i, row in enumerate(logits):
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
        chosen.append((ranker.templates[templates[best]], first))
    # The filler scores each candidate of a group on its own features alone (padding masked), so the groups go
    # through it padded into one batch rather than a call each.
    widest = max(len(group) for group, _ in chosen)
    x = np.zeros((len(examples), widest, len(columns)), np.float32)
    mask = np.zeros((len(examples), widest), np.float32)
    for i, (example, (group, _)) in enumerate(zip(examples, chosen, strict=True)):
        context = DialogContext.of(ranker.lexicon, example)
        x[i, :len(group)] = [candidate_features(ranker.lexicon, context, c)[columns] for c in group]
        mask[i, :len(group)] = 1.0
    scores = np.asarray(ranker.filler.predict({"features": x, "mask": mask}, batch_size=256, verbose=0))
    return [{c: np.inf if c == first else score for c, score in zip(group, row.tolist(), strict=False)}
            for (group, first), row in zip(chosen, scores, strict=True)]


def test_the_saved_model_answers_as_the_python_definition_on_every_task(task6, tmp_path: Path) -> None:
    """One model over generated tasks 1-5 (they share candidates) and one on DSTC2-like dialogs: the exported
    SavedModel, called as TF Serving would, answers every turn of dev and the OOV test as the ranker in memory and
    as the Python definition (same template, same filled response)."""
    generate(GenerationPlan(seed=4, dialogs_per_split=4), tmp_path / "data", runner="local")
    corpus = discover(tmp_path / "data")
    tasks = {n: TaskData.load(corpus[n]) for n in (1, 2, 3, 4, 5)}
    config = TemplateConfig(hops=1, embedding_dim=16, epochs=2)
    files6, trn6, _ = task6
    task6_data = TaskData.load(files6)
    cases = [
        (tasks[5].candidates, tasks[5].facts, [e for t in tasks.values() for e in t.split("trn")],
         [e for t in tasks.values() for e in t.split("dev")],
         [e for t in tasks.values() for split in ("dev", "tst-OOV") for e in t.split(split)]),
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
