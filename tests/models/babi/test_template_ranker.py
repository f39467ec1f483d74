"""The template ranker: lexicon learned from data, delexicalised examples, filling features, and a small fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from data.facts import corpus_facts
from data.layout import discover
from data.restaurant.generation import GenerationPlan, generate
from models.babi.template_ranker import (
    FILL_FEATURES,
    LEARNED_FILL_DEPTH,
    POLICY_FEATURES,
    CandidateGroup,
    DialogContext,
    EntityLexicon,
    RankedFilling,
    TemplateRanker,
    candidate_features,
    template_example,
    value_features,
)
from models.examples import TaskData, best_answers, split_examples
from models.metrics import accuracy_report
from models.training import TrainConfig
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


def test_candidate_groups_give_candidate_features_of_every_candidate(task6, tmp_path: Path) -> None:
    """The per-value tables give exactly the per-candidate sums, on DSTC2-like dialogs and on generated task 5
    (KB results, restaurants on offer, OOV test restaurants)."""
    generate(GenerationPlan(seed=3, dialogs_per_split=6, tasks=(5,)), tmp_path, runner="local")
    task5 = TaskData.load(discover(tmp_path)[5])
    files6, trn6, lexicon6 = task6
    lexicon5 = EntityLexicon.learn(task5.facts, [e.answer for e in task5.split("trn")])
    checked = 0
    for lexicon, candidates, examples in (
            (lexicon6, TaskData.load(files6).candidates, trn6),
            (lexicon5, task5.candidates, task5.split("trn")[::5] + task5.split("tst-OOV")[::5])):
        templates: dict[str, list[str]] = {}
        for candidate in candidates:
            templates.setdefault(lexicon.delexicalise(candidate), []).append(candidate)
        tables = [(group, CandidateGroup(lexicon, group)) for group in templates.values() if len(group) > 1]
        for example in examples:
            context = DialogContext.of(lexicon, example)
            for group, table in tables:
                expected = np.stack([candidate_features(lexicon, context, c) for c in group])
                np.testing.assert_array_equal(table.features(context), expected)
                checked += len(group)
    assert checked > 10_000
    # A restaurant on offer whose attributes the dialog never stated (known from the KB file only).
    context = DialogContext(bot_turn={"the_oak": 0}, on_offer="the_oak")
    phone = "The phone number of <name> is <phone>"
    group = [c for c in TaskData.load(files6).candidates if lexicon6.delexicalise(c) == phone]
    expected = np.stack([candidate_features(lexicon6, context, c) for c in group])
    assert expected[:, FILL_FEATURES.index("attribute_of_on_offer")].any()
    np.testing.assert_array_equal(CandidateGroup(lexicon6, group).features(context), expected)
