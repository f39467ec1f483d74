"""The pipeline's profiles for a Movie Dialog corpus: the streamed joint MemN2N (and, in the full profile, the
joint supervised embeddings), trained on every task at once, and what blesses them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from models.movie.streamed import PRODUCT_JOINT_MEMN2N, STREAMED_JOINT_EMBEDDINGS, StreamedConfig
from models.papers import Product

COMPONENT_NAMES = {"memn2n": "MemN2N", "embeddings": "Embeddings"}


@dataclass(frozen=True)
class MovieProfile:
    """The streamed joint MemN2N's settings, the joint supervised embeddings' (None: not trained), and what
    blesses them."""

    name: str
    memn2n: StreamedConfig
    embeddings: StreamedConfig | None = None
    # Per-response accuracy (hits@1, a fraction) over the dev exchanges of every task a model needs to be blessed:
    # a sanity floor, since recommendation (scored by hits@100) sits far below QA at hits@1 by nature.
    min_accuracy: float = 0.05
    max_drop: float = 0.01

    @property
    def models(self) -> tuple[str, ...]:
        """The models this profile trains, in the order of the slice table's columns."""
        return ("memn2n",) + (("embeddings",) if self.embeddings is not None else ())

    def products(self, tasks: Sequence[int] = ()) -> tuple[Product, ...]:
        """One joint model of each kind over every task (``tasks`` is not a choice here: the pipeline refuses it)."""
        return tuple(Product(model, COMPONENT_NAMES[model], f"movie_joint_{model}", getattr(self, model),
                             self.min_accuracy) for model in self.models)


# Full: the joint MemN2N's settings (models.movie.streamed: 8 task-balanced epochs, patience 3) and the joint
# supervised embeddings. Quick: the MemN2N alone, 4 epochs of batches of 128, what `--quick` has time for on
# the small world, at the streamed trainer's default rate rather than the full profile's: the full profile's rate
# was chosen at the paper's scale, and the tiny world's few steps at it left a model its Evaluator did not bless
# (docs/movie.md).
PROFILES = {profile.name: profile for profile in (
    MovieProfile(name="full", memn2n=PRODUCT_JOINT_MEMN2N, embeddings=STREAMED_JOINT_EMBEDDINGS),
    MovieProfile(name="quick", memn2n=replace(PRODUCT_JOINT_MEMN2N, epochs=4, batch_size=128, learning_rate=0.01)))}
