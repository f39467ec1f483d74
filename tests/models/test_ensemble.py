"""An ensemble over seeds answers with its members' mean probabilities, and their first member's attention."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from models.ensemble import SeedEnsemble


class _Fixed(keras.Model):
    """Fixed logits for every example, and an attention of its own."""

    def __init__(self, logits: list[float], mark: float) -> None:
        super().__init__(name="fixed")
        self.logits, self.mark = tf.constant([logits]), mark

    def call(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        return tf.repeat(self.logits, tf.shape(inputs["query"])[0], axis=0)

    def predict_with_attention(self, inputs: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        return self.call(inputs), tf.fill([tf.shape(inputs["query"])[0], 1, 1], self.mark)


def test_the_ensemble_averages_probabilities_not_logits() -> None:
    # members chosen so that averaging their logits and averaging their probabilities pick different candidates
    first, second = _Fixed([-3.0, -1.0, 1.0], 1.0), _Fixed([0.0, 0.0, -3.0], 2.0)
    inputs = {"query": tf.zeros([2, 3], tf.int32)}
    logits, attention = SeedEnsemble([first, second]).predict_with_attention(inputs)
    expected = (tf.nn.softmax(first.logits) + tf.nn.softmax(second.logits)).numpy()[0] / 2
    np.testing.assert_allclose(tf.nn.softmax(logits).numpy(), [expected, expected], rtol=1e-5)
    assert np.argmax(logits.numpy()[0]) == 2 and attention.numpy().ravel().tolist() == [1.0, 1.0]
    np.testing.assert_allclose(SeedEnsemble([first, second])(inputs).numpy(), logits.numpy())


def test_one_model_is_no_ensemble() -> None:
    with pytest.raises(ValueError, match="at least two"):
        SeedEnsemble([_Fixed([0.0], 0.0)])
