"""The pretrained sentence encoder in TensorFlow ops: sentences of one meaning land together (which a wrong
layer, transpose or pooling would undo), a text's vector does not depend on the batch it is encoded in (padding
is masked), and a text without a word of the vocabulary is the zero vector."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from models.sentence_encoder import SentenceEncoder


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    return SentenceEncoder()


def test_sentences_of_one_meaning_land_together(encoder: SentenceEncoder) -> None:
    texts = ["nope", "no", "yes please", "thanks a lot , bye", "thank you , goodbye", "okay"]
    vectors = dict(zip(texts, encoder(tf.constant(texts)).numpy(), strict=True))
    similarity = lambda a, b: float(vectors[a] @ vectors[b])  # noqa: E731
    assert similarity("nope", "no") > similarity("nope", "yes please") + 0.3
    assert similarity("thanks a lot , bye", "thank you , goodbye") > similarity("thanks a lot , bye", "okay") + 0.3


def test_a_text_is_encoded_alike_in_any_batch_and_unknown_words_add_nothing(encoder: SentenceEncoder) -> None:
    short, long = "nope", "i would like to send one hundred euros to my sister today please"
    alone = encoder(tf.constant([short])).numpy()[0]
    batch = encoder(tf.constant([long, short, long, ""])).numpy()
    np.testing.assert_allclose(batch[1], alone, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(batch[:3], axis=1), 1.0, atol=1e-5)
    assert not batch[3].any() and not encoder(tf.constant(["card_7242"])).numpy().any()
    np.testing.assert_allclose(encoder(tf.constant(["nope card_7242"])).numpy()[0], alone, atol=1e-5)
