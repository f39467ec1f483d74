"""The streamed trainer's sampled softmax masks every sampled entity that is one of the example's right answers."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from models.movie.streamed import drawn_right


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=40),
       st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=6))
def test_drawn_right_is_the_pairwise_comparison(drawn: list[int], answers: list[list[int]]) -> None:
    width = max(len(a) for a in answers)
    right = np.full([len(answers), width], -1, dtype=np.int64)  # padded as tf.sparse.to_dense pads them
    for row, found in enumerate(answers):
        right[row, :len(found)] = found
    expected = (np.array(drawn)[None, :, None] == right[:, None, :]).any(-1)
    np.testing.assert_array_equal(drawn_right(tf.constant(drawn, tf.int32), tf.constant(right)).numpy(), expected)
