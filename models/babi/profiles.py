"""The pipeline's profiles for a dialog-bAbI corpus (tasks 1-6): what the Trainers train, how hard, and what the
Evaluators ask of a model before it is pushed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from models.babi.presets import HCN_PRODUCT, paper_config
from models.papers import Product
from models.training import TrainConfig

# The product model first: the template ranker is what `make run` pushes for serving; the paper's two beside it.
MODELS = ("template", "memn2n", "embeddings")
# Each model's method (models.babi.methods) and its components' prefix.
MODEL_METHODS = {"template": "template_memn2n", "memn2n": "memn2n", "embeddings": "embeddings"}
COMPONENT_NAMES = {"template": "Template", "memn2n": "MemN2N", "embeddings": "Embeddings"}

# Blessing floors of a task trained alone, where the joint floors do not fit: task 6's real dialogs score far below
# the simulated tasks (docs/results.md), so its floors are sanity floors well under what each model reaches.
TASK_FLOORS: dict[int, dict[str, float]] = {6: {"template": 0.4, "memn2n": 0.3, "embeddings": 0.15}}
# The product model of a task trained alone, where another than the template MemN2N wins: on task 6, Hybrid Code
# Networks' LSTM (with its action mask), averaged over seeds, leads the rule-based system, the template MemN2N and
# the single HCN on every estimate, the held-out folds and the held-out bot styles (docs/babi.md).
TASK_TEMPLATE: dict[int, dict[str, object]] = {6: HCN_PRODUCT}


@dataclass(frozen=True)
class Profile:
    """How hard the Trainers work, and what the Evaluator asks of a model before it is pushed."""

    name: str
    template: TrainConfig
    memn2n: TrainConfig
    embeddings: TrainConfig
    # Per-response accuracy (a fraction) a model needs on the dev dialogs to be blessed, per model.
    min_accuracy: dict[str, float] = field(default_factory=dict)
    # How much per-response accuracy may drop against the last blessed model of the same kind.
    max_drop: float = 0.01
    # TFX splits each model's Evaluator reads: "eval" the dev dialogs (they bless), "test" tst and tst-OOV
    # (reported). A model not named reads both.
    eval_splits: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The models the pipeline trains, evaluates and pushes (some of MODELS, the product model first).
    models: tuple[str, ...] = MODELS

    def __post_init__(self) -> None:
        """A profile naming no model, an unknown one, or not the product model first is refused when defined."""
        if not self.models or self.models[0] != MODELS[0] or not set(self.models) <= set(MODELS) \
                or len(set(self.models)) != len(self.models):
            raise ValueError(f"profile {self.name!r}: models must be some of {list(MODELS)}, each once, "
                             f"{MODELS[0]!r} first; got {list(self.models)}")

    def evaluated_splits(self, model: str) -> tuple[str, ...]:
        """The TFX splits ``model``'s Evaluator reads (both unless the profile says otherwise)."""
        return self.eval_splits.get(model, ("eval", "test"))

    def for_tasks(self, tasks: Sequence[int]) -> Profile:
        """The profile for a run over ``tasks``: one task alone (``--tasks 6``) takes its own row of Tables 8-9
        (hops and sizes), as ``dialog train`` and ``dialog benchmark`` do; several keep the joint model's."""
        if len(tasks) != 1:
            return self
        (task,) = tasks
        kept = ("match_type", "epochs", "batch_size", "patience", "fill_epochs", "learning_rate", "seed")
        neural = {name: paper_config(task, model=config.model, **{key: getattr(config, key) for key in kept
                                                                   if hasattr(config, key)},
                                     **(TASK_TEMPLATE.get(task, {}) if name == "template" else {}))
                  for name, config in (("template", self.template), ("memn2n", self.memn2n))}
        embeddings = paper_config(task, model="embeddings", match_type=self.embeddings.match_type,
                                  epochs=self.embeddings.epochs, patience=self.embeddings.patience)
        return replace(self, min_accuracy={**self.min_accuracy, **TASK_FLOORS.get(task, {})}, embeddings=embeddings,
                       **neural)

    def products(self, tasks: Sequence[int] = ()) -> tuple[Product, ...]:
        """The models of a run over ``tasks``, the product model first (:meth:`for_tasks`' settings)."""
        chosen = self.for_tasks(tasks)
        return tuple(Product(model, COMPONENT_NAMES[model], MODEL_METHODS[model], getattr(chosen, model),
                             chosen.min_accuracy[model], chosen.evaluated_splits(model)) for model in chosen.models)


# One joint model over every selected task (they share the candidate set): MemN2N with match type (Table 9's
# task-5 size and hops) and the embeddings of Table 8's task-5 row, trained with the shared defaults (Adam's rate,
# batch and epochs of `dialog train`), stopping after 4 epochs without a better dev accuracy (the best is kept).
FULL = Profile(
    name="full",
    template=paper_config(5, model="template", patience=4),
    memn2n=paper_config(5, match_type=True, patience=4),
    embeddings=paper_config(5, model="embeddings", match_type=True, patience=4),
    min_accuracy={"template": 0.95, "memn2n": 0.85, "embeddings": 0.5},
)
# Quick: what fits in the few minutes `make run` has on a 2-core machine: few epochs of the template model (it
# reaches nearly every dev template after one) and of its filler, enough MemN2N epochs to pass the paper's task-5
# figure jointly on dev, floors for such short training. The epoch counts were chosen on dev (docs/results.md has
# the measurements). Every model is evaluated on dev, which blesses; the test sets are reported for the product
# model alone, because TFMA's cost per turn would spend much of the budget on MemN2N's test turns (the full profile
# reports them). The supervised embeddings are left to the full profile for the same reason; their quick settings
# stay below, for a quick profile that names them again (``replace(QUICK, models=MODELS)``).
QUICK = replace(FULL, name="quick", template=replace(FULL.template, epochs=3, fill_epochs=3),
                memn2n=replace(FULL.memn2n, epochs=10),
                embeddings=replace(FULL.embeddings, epochs=3),
                min_accuracy={"template": 0.9, "memn2n": 0.6, "embeddings": 0.3},
                eval_splits={"memn2n": ("eval",), "embeddings": ("eval",)}, models=("template", "memn2n"))
PROFILES = {profile.name: profile for profile in (QUICK, FULL)}
