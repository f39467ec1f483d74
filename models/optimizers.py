"""Adam that steps only the rows a sparse gradient touches (the "lazy" Adam of large embedding tables).

Keras 3's Adam turns a ``tf.IndexedSlices`` gradient into a dense tensor: every step then reads and writes the
whole table and both of its moments. For the restaurant vocabularies (a few thousand words) that is cheap; for the
Movie Dialog corpus (117k words, three 64-wide tables) it was most of a training step (docs/results.md has the
profile).
:class:`RowAdam` updates the first and second moments and the weights of the gradient's rows alone. A row the batch
does not touch keeps its moments and does not move, where Keras' Adam would keep moving it by its decaying
momentum: the usual trade of sparse Adam (TensorFlow 1's lazy Adam), measured on the Movie Dialog small world
before it was made the default there (docs/movie.md).
"""

from __future__ import annotations

import keras
import tensorflow as tf


class RowAdam(keras.optimizers.Adam):
    """``keras.optimizers.Adam`` whose update of a ``tf.IndexedSlices`` gradient touches its rows alone; dense
    gradients take Keras' own step."""

    def update_step(self, gradient: tf.Tensor | tf.IndexedSlices, variable: keras.Variable,
                    learning_rate: float | tf.Tensor) -> None:
        if not isinstance(gradient, tf.IndexedSlices):
            return super().update_step(gradient, variable, learning_rate)
        if self.amsgrad:
            raise ValueError("RowAdam does not implement amsgrad for sparse gradients")
        dtype = variable.dtype
        # A table used twice in a step (queries and memories, gold answers and sampled ones) has a row per use:
        # the moments must see the row's one summed gradient, as the dense step would.
        rows, position = tf.unique(gradient.indices)
        step = tf.math.unsorted_segment_sum(tf.cast(gradient.values, dtype), position, tf.shape(rows)[0])
        iteration = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        alpha = (tf.cast(learning_rate, dtype) * tf.sqrt(1 - tf.pow(beta_2, iteration))
                 / (1 - tf.pow(beta_1, iteration)))
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        m_rows = beta_1 * tf.gather(m.value, rows) + (1 - beta_1) * step
        v_rows = beta_2 * tf.gather(v.value, rows) + (1 - beta_2) * tf.square(step)
        self.assign(m, tf.IndexedSlices(m_rows, rows))
        self.assign(v, tf.IndexedSlices(v_rows, rows))
        self.assign_sub(variable, tf.IndexedSlices(alpha * m_rows / (tf.sqrt(v_rows) + self.epsilon), rows))
        return None
