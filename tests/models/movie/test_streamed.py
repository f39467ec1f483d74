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


def test_the_lstm_reads_the_last_messages_and_the_query_cut_to_their_last_words() -> None:
    from models.features import spec_from_sentences
    from models.movie.graph_text import GraphEntityText
    from models.movie.streamed import MovieFeatures

    words = ["a", "b", "c", "d", "e", "f", "g", "h"]
    spec = spec_from_sentences(["zed"], [], words, memory_size=10)
    text = GraphEntityText(["Zed"], words=words)
    history, query = tf.ragged.constant([["a b", "c d", "e f"], []]), tf.constant(["g h", "a zed"])

    def ids(sentence: str, width: int) -> list[int]:
        found = [spec.word_id(w) for w in sentence.split()]
        return found + [0] * (width - len(found))

    wide = MovieFeatures(text, spec, context=2, max_tokens=8)(history, query)
    assert wide["tokens"].numpy().tolist() == [ids("c d e f g h", 8), ids("a zed", 8)]
    cut = MovieFeatures(text, spec, context=2, max_tokens=3)(history, query)
    assert cut["tokens"].numpy().tolist() == [ids("f g h", 3), ids("a zed", 3)]
    assert "tokens" not in MovieFeatures(text, spec)(history, query)  # the MemN2N's inputs are unchanged


def test_the_streamed_lstm_scores_the_gold_answer_in_its_own_column() -> None:
    """Inference: the encoded message against every candidate's bag; training: against the batch's gold answers
    (row b's in column b), then the drawn entities; another row's same answer is masked."""
    from models.memn2n import NEG_INF, ROWS, bag_of_embeddings
    from models.movie.streamed import SampledLstm

    candidates = np.array([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    model = SampledLstm(8, candidates, (0, 3), sampled=3, embedding_dim=4, seed=2, gradient=ROWS)
    tokens = tf.constant([[1, 7, 3, 0], [5, 0, 0, 0]])
    state = model.encode(tokens)
    every = tf.matmul(state, bag_of_embeddings(model.W, tf.constant(candidates)), transpose_b=True).numpy()
    np.testing.assert_allclose(model({"tokens": tokens}).numpy(), every, atol=1e-6)
    answers = tf.constant([[3, 0, 0], [4, 5, 6]])
    inputs = {"tokens": tokens, "answer_ids": answers, "answer_key": tf.constant([11, 12], tf.int64),
              "right": tf.constant([[1, -1], [0, 1]], tf.int64)}
    logits = model(inputs, training=True).numpy()
    gold = tf.matmul(state, bag_of_embeddings(model.W, answers), transpose_b=True).numpy()
    assert logits.shape == (2, 5)
    np.testing.assert_allclose(logits[:, :2], gold, atol=1e-6)
    same = model({**inputs, "answer_key": tf.constant([11, 11], tf.int64)}, training=True).numpy()
    np.testing.assert_allclose(np.diag(same[:, :2]), np.diag(gold), atol=1e-6)
    assert same[0, 1] == same[1, 0] == NEG_INF


def _task_records(path: str, tasks: dict[str, int]) -> None:
    from models.movie.records import write_tfrecords

    records = []
    for task, count in tasks.items():
        example = tf.train.Example(features=tf.train.Features(feature={
            "task": tf.train.Feature(bytes_list=tf.train.BytesList(value=[task.encode()]))}))
        records += [example.SerializeToString()] * count
    write_tfrecords(path, records)


def test_task_rates_give_each_task_its_share_of_an_epoch() -> None:
    from models.movie.streamed import StreamedConfig, task_rates

    counts = {"qa": 100, "recs": 10_000}
    assert task_rates(counts, StreamedConfig()) == {"qa": 1.0, "recs": 1.0}  # not balanced: every exchange once
    equal = task_rates(counts, StreamedConfig(task_sampling=0.0, epoch_exchanges=2_000))
    assert equal == {"qa": 10.0, "recs": 0.1}  # 1,000 exchanges of each
    assert task_rates(counts, StreamedConfig(epoch_exchanges=50_000)) == {"qa": 1.0, "recs": 1.0}  # a cap only
    root = task_rates(counts, StreamedConfig(task_sampling=0.5))  # shares 10 : 100 of the corpus's 10,100
    assert np.isclose(root["qa"] * 100, 10_100 * 10 / 110) and np.isclose(root["recs"] * 10_000, 10_100 * 100 / 110)


def test_a_sampled_stream_holds_each_task_at_its_rate_and_draws_anew_each_epoch(tmp_path) -> None:
    from models.movie.streamed import _sampled, _serialized

    path = str(tmp_path / "train.gz")
    _task_records(path, {"qa": 200, "recs": 4_000})
    stream = _sampled(_serialized([path]), {"qa": 5.0, "recs": 0.25}, seed=1)

    def epoch() -> tuple[dict[str, int], list[bytes]]:
        tasks = [tf.train.Example.FromString(r.numpy()).features.feature["task"].bytes_list.value[0].decode()
                 for r in stream]
        return {t: tasks.count(t) for t in ("qa", "recs")}, tasks

    first, order = epoch()
    second, again = epoch()
    assert first["qa"] == second["qa"] == 1_000  # 5 copies of each
    assert 800 < first["recs"] < 1_200 and 800 < second["recs"] < 1_200  # a quarter of 4,000, drawn
    assert order != again  # another draw in the next epoch
