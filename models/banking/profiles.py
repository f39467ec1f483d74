"""The pipeline's profiles for a banking corpus: the state ranker (ours, the product model) with its own config,
and SMN with Majumdar et al.'s section-5 settings (``models.banking.networks.paper_config``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from models.banking.networks import paper_config
from models.banking.state_ranker import StateConfig
from models.papers import Product
from models.training import MemN2NConfig

# The product model first. MMN is left to Tables 8-9: seven networks (six intents and the selector) would cost the
# pipeline seven Trainers' time for a model the tables show below SMN out of pattern (docs/banking.md).
MODELS = ("state_ranker", "smn")
COMPONENT_NAMES = {"state_ranker": "StateRanker", "smn": "SMN"}


@dataclass(frozen=True)
class BankingProfile:
    """The state ranker's and SMN's settings, and what blesses each (per-response accuracy on dev, a fraction)."""

    name: str
    state_ranker: StateConfig
    smn: MemN2NConfig
    min_accuracy: dict[str, float] = field(default_factory=dict)
    max_drop: float = 0.01
    eval_splits: dict[str, tuple[str, ...]] = field(default_factory=dict)  # as the bAbI profiles'

    def products(self, tasks: Sequence[int] = ()) -> tuple[Product, ...]:
        return tuple(Product(model, COMPONENT_NAMES[model], model, getattr(self, model), self.min_accuracy[model],
                             self.eval_splits.get(model, ("eval", "test"))) for model in MODELS)


# Full: the paper's loop for both (at most 20 epochs, the best on dev, stopping after 3 without a better one).
FULL = BankingProfile(name="full", state_ranker=StateConfig(), smn=paper_config(patience=3),
                      min_accuracy={"state_ranker": 0.95, "smn": 0.85})
# Quick: the epochs and floors the quick bAbI profile gives its product model and its MemN2N; SMN is evaluated on
# dev alone, as the quick MemN2N is.
QUICK = replace(FULL, name="quick", state_ranker=replace(FULL.state_ranker, epochs=3),
                smn=replace(FULL.smn, epochs=10), min_accuracy={"state_ranker": 0.9, "smn": 0.6},
                eval_splits={"smn": ("eval",)})
PROFILES = {profile.name: profile for profile in (QUICK, FULL)}
