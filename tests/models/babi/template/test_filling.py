"""The filling features' dialog context: the restaurant on offer and the best not yet offered."""

from __future__ import annotations

from models.babi.template.filling import (
    FILL_FEATURES,
    DialogContext,
    value_features,
)
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


def test_context_knows_the_restaurant_on_offer_and_the_best_not_yet_offered(task6) -> None:
    _, trn, lexicon = task6
    context = DialogContext.of(lexicon, trn[4])  # "is there anything else" after the_elm was offered
    assert context.on_offer == "the_elm" and context.results == {"the_oak": 4, "the_elm": 9}
    best = FILL_FEATURES.index("best_not_offered")
    assert value_features(lexicon, context, "name", "the_oak", None)[best] == 1.0
    assert value_features(lexicon, context, "name", "the_elm", None)[best] == 0.0
    own = FILL_FEATURES.index("own_attribute")
    assert value_features(lexicon, context, "location", "north", "the_oak")[own] == 1.0
