"""Several trained models of one featurisation answering as one: their probabilities averaged.

Models trained with different seeds disagree most where the training data says least, which on a new caller or a
new bot is where they are wrong alone; the mean of their softmaxes is the usual remedy (an ensemble over seeds).
The result is a Keras model with the members' signatures (``predict_with_attention``), so a serving module holds
it as it holds one model and the SavedModel carries every member's weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import tensorflow as tf

# Added to the averaged probabilities before their log, so that a candidate every member rules out stays finite.
TINY = 1e-12


class SeedEnsemble(keras.Model):
    """``call`` and ``predict_with_attention``: log of the members' mean softmax [B, C] (a softmax of it gives the
    mean back), and the first member's attention."""

    def __init__(self, members: Sequence[keras.Model], **kwargs) -> None:
        super().__init__(**kwargs)
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least two models, got {len(members)}")
        self.members = list(members)

    def build(self, input_shape: object = None) -> None:
        """Nothing of its own to create: the members come trained."""
        self.built = True

    def _mean(self, logits: Sequence[tf.Tensor]) -> tf.Tensor:
        probabilities = tf.reduce_mean(tf.stack([tf.nn.softmax(value) for value in logits]), axis=0)
        return tf.math.log(probabilities + TINY)

    def call(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        return self._mean([member(inputs) for member in self.members])

    def predict_with_attention(self, inputs: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        answers = [member.predict_with_attention(inputs) for member in self.members]
        return self._mean([logits for logits, _ in answers]), answers[0][1]
