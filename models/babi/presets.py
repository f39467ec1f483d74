"""Hyperparameter presets: Tables 8 (supervised embeddings) and 9 (Memory Networks) of Bordes et al. (2017), and
the training settings built from them."""

from __future__ import annotations

from typing import Any

from models.babi.template import config as _template_config  # noqa: F401 (registers "template" for train_config)
from models.training import TrainConfig, train_config

# task -> (learning rate, margin, embedding dim, negative candidates, hops)
MEMN2N_TABLE9: dict[int, dict[str, float | int]] = {
    1: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 128, "negatives": 100, "hops": 1},
    2: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 32, "negatives": 100, "hops": 1},
    3: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 32, "negatives": 100, "hops": 3},
    4: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 128, "negatives": 100, "hops": 2},
    5: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 32, "negatives": 100, "hops": 3},
    6: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 128, "negatives": 100, "hops": 4},
}

# task -> (learning rate, margin, embedding dim, negative candidates, use history)
EMBEDDINGS_TABLE8: dict[int, dict[str, float | int | bool]] = {
    1: {"learning_rate": 0.01, "margin": 0.01, "embedding_dim": 32, "negatives": 100, "use_history": True},
    2: {"learning_rate": 0.01, "margin": 0.01, "embedding_dim": 128, "negatives": 100, "use_history": False},
    3: {"learning_rate": 0.01, "margin": 0.1, "embedding_dim": 128, "negatives": 1000, "use_history": False},
    4: {"learning_rate": 0.001, "margin": 0.1, "embedding_dim": 128, "negatives": 1000, "use_history": False},
    5: {"learning_rate": 0.01, "margin": 0.01, "embedding_dim": 32, "negatives": 100, "use_history": True},
    6: {"learning_rate": 0.001, "margin": 0.01, "embedding_dim": 128, "negatives": 100, "use_history": False},
}

# The smaller step Table 2's MemN2N rows also try where an OOV dev set exists (data.oov_dev): dev holds no unseen
# entity, so it cannot see what the shared defaults cost the OOV test sets; the OOV dev set can. The plain sets and
# the OOV sets each take the step better on their own dev set.
OOV_DEV_STEP: dict[str, float | int] = {"learning_rate": 0.001, "batch_size": 32}


# Hybrid Code Networks (docs/babi.md): the template ranker with an LSTM over the utterances for its template model,
# ranking with the learned action mask, its tracked state saying whether the KB has what it holds. Table 2's
# ``hcn`` rows and a pipeline over task 6 alone both train it so.
HCN_TEMPLATE: dict[str, str | bool] = {"encoder": "lstm", "action_mask": True, "kb_match": True}
# How many seeds the ``-ensemble`` methods and the product's HCN average (models.ensemble.SeedEnsemble).
SEED_ENSEMBLE = 3
# Task 6's product model: HCN's template LSTM averaged over seeds, which leads the single HCN on every estimate
# (folds, the held-out bot styles, dev; docs/babi.md). Table 2's ``hcn`` stays one model, as the paper's.
HCN_PRODUCT: dict[str, str | bool | int] = {**HCN_TEMPLATE, "ensemble": SEED_ENSEMBLE}


def memn2n_preset(task: int) -> dict[str, float | int]:
    """Table 9's row for a task; tasks beyond 6 take task 6's (real dialogs). Its learning rate is the paper's;
    training uses ``models.training.TRAINING_DEFAULTS``' instead."""
    return dict(MEMN2N_TABLE9.get(task, MEMN2N_TABLE9[6]))


def embeddings_preset(task: int) -> dict[str, float | int | bool]:
    """Table 8's row for a task; tasks beyond 6 take task 6's."""
    return dict(EMBEDDINGS_TABLE8.get(task, EMBEDDINGS_TABLE8[6]))


def paper_config(task: int, model: str = "memn2n", **overrides: Any) -> TrainConfig:
    """Table 9's (MemN2N and the template ranker's MemN2N: hops, embedding size) or Table 8's (embeddings: rate,
    margin, size, negatives, history) settings for ``task``, then ``overrides``. MemN2N keeps the shared learning
    rate: Table 9's 0.01 diverges under Adam."""
    if model == "embeddings":
        preset = embeddings_preset(task)
        base = {"embedding_dim": int(preset["embedding_dim"]), "learning_rate": float(preset["learning_rate"]),
                "margin": float(preset["margin"]), "negatives": int(preset["negatives"]),
                "use_history": bool(preset["use_history"])}
    else:
        preset = memn2n_preset(task)
        base = {"hops": int(preset["hops"]), "embedding_dim": int(preset["embedding_dim"])}
    return train_config(model, **{**base, **overrides})
