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


def test_no_hop_is_the_supervised_embeddings_score() -> None:
    """hops=0: the query's summed words against each candidate's (x^T U^T V y), the memory unread."""
    from models.memn2n import bag_of_embeddings
    from models.movie.streamed import SampledMemN2N

    candidates = np.array([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    model = SampledMemN2N(8, candidates, (0, 3), sampled=2, embedding_dim=4, hops=0, dictionaries=2)
    inputs = {"memory": tf.constant([[[7, 1, 0]], [[0, 0, 0]]]), "query": tf.constant([[1, 3, 0], [5, 0, 0]])}
    scores = model(inputs).numpy()
    query = bag_of_embeddings(model.A, inputs["query"])
    expected = tf.matmul(query, bag_of_embeddings(model.W, tf.constant(candidates)), transpose_b=True).numpy()
    np.testing.assert_allclose(scores, expected, atol=1e-6)
    other_memory = {**inputs, "memory": tf.constant([[[2, 2, 2]], [[6, 6, 6]]])}
    np.testing.assert_allclose(model(other_memory).numpy(), scores, atol=1e-6)
