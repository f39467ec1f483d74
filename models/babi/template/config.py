"""The template ranker's config: a MemN2N's, and what the ranker adds (its filler, the tracked state, HCN's LSTM
and action mask, an ensemble over seeds). Registered with the core's configs (``models.training.register_config``),
so ``train_config("template")`` and the TFX Trainer build it by name."""

from __future__ import annotations

from dataclasses import dataclass, fields

from models.training import MemN2NConfig, RecurrentConfig, TrainConfig, check_whole, register_config


@register_config
@dataclass(frozen=True)
class TemplateConfig(MemN2NConfig):
    """The template ranker (models.babi.template): a MemN2N with these settings ranks delexicalised answers, a
    filler trained for ``fill_epochs`` fills their entities."""

    model: str = "template"
    fill_epochs: int = 10
    # Whether the template model reads the tracked dialog state (models.babi.dialog_state; False: the ablation).
    dialog_state: bool = True
    # Whether the tracked state also says if some KB entry has its slot values (models.babi.dialog_state: the KB of
    # the training facts); the ``-no_kb_match`` rows ablate it.
    kb_match: bool = False
    # With a tracked state: log-odds added to the API call (one action, its arguments the state's), chosen on task
    # 6's held-out folds (docs/results.md). None: API calls are templates like the others.
    call_bias: float | None = 0.5
    # The template model: a MemN2N over the history ("memn2n"), or an LSTM over its utterances ("lstm": Hybrid Code
    # Networks' recurrent policy, with ``hidden`` units; the MemN2N's hops and dictionaries then go unused).
    encoder: str = "memn2n"
    hidden: int = 128
    # HCN's averaged pretrained word vectors as part of each LSTM step (models.recurrent; the LSTM only).
    word_vectors: bool = False
    # HCN's action mask (at ranking, not in training): a template is not chosen before the dialog holds a value of
    # each entity kind it waits for (learned: models.babi.template.ranker.TemplateRanker.learn_waits).
    action_mask: bool = False
    # The template model as the mean of this many models trained alike, seeds ``seed`` to ``seed + ensemble - 1``
    # (models.ensemble.SeedEnsemble); 1: one model.
    ensemble: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole(self, "fill_epochs", "hidden", "ensemble")
        if self.encoder not in TEMPLATE_ENCODERS:
            raise ValueError(f"encoder must be one of {list(TEMPLATE_ENCODERS)}, got {self.encoder!r}")
        if self.word_vectors and self.encoder != "lstm":
            raise ValueError("word_vectors is HCN's input: it needs encoder='lstm'")

    def template_model(self) -> MemN2NConfig | RecurrentConfig:
        """The settings of its template model: the MemN2N's, or the LSTM's."""
        kind = TEMPLATE_ENCODERS[self.encoder]
        return kind(**{f.name: getattr(self, f.name) for f in fields(kind) if f.name != "model"})




TEMPLATE_ENCODERS: dict[str, type[TrainConfig]] = {"memn2n": MemN2NConfig, "lstm": RecurrentConfig}
