"""RowAdam: Keras' Adam on the rows a sparse gradient touches, the other rows and their moments left alone."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from models.optimizers import RowAdam


def stepped(optimizer: keras.optimizers.Optimizer, gradients: list[tf.Tensor | tf.IndexedSlices]) -> np.ndarray:
    table = keras.Variable(np.arange(24, dtype=np.float32).reshape(6, 4) / 10, name="table")
    for gradient in gradients:
        optimizer.apply_gradients([(gradient, table)])
    return keras.ops.convert_to_numpy(table)


def test_a_step_is_adams_on_the_touched_rows_with_repeated_rows_summed() -> None:
    # Row 2 twice: its step must see the sum of its two rows, as the dense gradient holds it.
    first = tf.IndexedSlices(tf.constant([[0.3] * 4, [1.0] * 4, [0.5] * 4]), tf.constant([2, 4, 2]),
                             dense_shape=tf.constant([6, 4]))
    second = tf.IndexedSlices(tf.constant([[-0.7] * 4]), tf.constant([4]), dense_shape=tf.constant([6, 4]))
    rows = stepped(RowAdam(learning_rate=0.1), [first, second])
    dense = stepped(keras.optimizers.Adam(learning_rate=0.1), [tf.convert_to_tensor(first)])
    dense_both = stepped(keras.optimizers.Adam(learning_rate=0.1),
                         [tf.convert_to_tensor(first), tf.convert_to_tensor(second)])
    untouched = stepped(keras.optimizers.Adam(learning_rate=0.1), [])
    # Row 4, in both steps, takes Adam's two steps; row 2, in the first only, keeps Adam's first step, where
    # Keras' dense Adam moves it again by its momentum; rows never touched do not move.
    np.testing.assert_allclose(rows[4], dense_both[4], atol=1e-6)
    np.testing.assert_allclose(rows[2], dense[2], atol=1e-6)
    assert np.abs(dense_both[2] - dense[2]).max() > 1e-3
    np.testing.assert_allclose(rows[[0, 1, 3, 5]], untouched[[0, 1, 3, 5]])


def test_dense_gradients_take_keras_adams_step() -> None:
    gradient = tf.random.normal([6, 4], seed=4)
    np.testing.assert_allclose(stepped(RowAdam(learning_rate=0.1), [gradient, gradient]),
                               stepped(keras.optimizers.Adam(learning_rate=0.1), [gradient, gradient]), atol=1e-6)
