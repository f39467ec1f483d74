"""The LSTM over utterances (Hybrid Code Networks' policy): its answer to a dialog does not depend on the other
dialogs of its batch (the empty memory slots of a shorter history are skipped, not read as utterances), and it
reads the order of the utterances."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from models.examples import TurnExample, pad_batch
from models.features import Featurizer, spec_from_sentences
from models.recurrent import UtteranceLSTM

LINES = ("hello", "i want food", "which area", "the north", "ok", "thanks")


def _example(memory: tuple[str, ...], query: str) -> TurnExample:
    speakers = tuple("user" if i % 2 == 0 else "bot" for i in range(len(memory)))
    return TurnExample("d", "t", "trn", len(memory) // 2, memory, speakers, query, "ok")


def _logits(model: UtteranceLSTM, featurizer: Featurizer, examples: list[TurnExample]) -> np.ndarray:
    memory, speaker, query = pad_batch(examples)
    features = featurizer(tf.constant(memory), tf.constant(speaker), tf.constant(query))
    return model(features).numpy()


def test_an_answer_depends_on_its_dialog_alone_and_on_the_order_of_its_lines() -> None:
    spec = spec_from_sentences(["ok", "which area"], [], LINES, memory_size=10)
    model, featurizer = UtteranceLSTM(len(spec.vocabulary), 2, embedding_dim=8, hidden=8, seed=3), Featurizer(spec)
    short, long = _example(LINES[:2], "the north"), _example(LINES, "ok")
    _logits(model, featurizer, [short])  # builds the weights
    # Biases away from their initial zeros, as after training: a zero step of an untrained LSTM changes nothing.
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(size=w.shape) for w in model.get_weights()])
    alone = _logits(model, featurizer, [short])
    np.testing.assert_allclose(_logits(model, featurizer, [short, long])[0], alone[0], rtol=1e-5, atol=1e-6)
    swapped = _example(LINES[:2][::-1], "the north")
    assert not np.allclose(_logits(model, featurizer, [swapped])[0], alone[0], atol=1e-4)


def test_a_step_reads_the_mean_pretrained_vector_of_the_words_that_have_one() -> None:
    """HCN's averaged word vectors: a word without a vector (row of zeros) does not dilute the mean, and the table
    is fixed, never a trained weight."""
    spec = spec_from_sentences(["ok"], [], LINES, memory_size=10)
    table = np.zeros((len(spec.vocabulary), 3), np.float32)
    table[spec.word_id("the")] = [1.0, 0.0, 0.0]
    table[spec.word_id("north")] = [0.0, 2.0, 0.0]
    model = UtteranceLSTM(len(spec.vocabulary), 2, embedding_dim=4, hidden=4, seed=0, pretrained=table)
    featurizer = Featurizer(spec)
    features = featurizer(*(tf.constant(x) for x in pad_batch([_example(LINES[:2], "the north ok")])))
    np.testing.assert_allclose(model.averaged(features["query"]).numpy(), [[0.5, 1.0, 0.0]])
    _logits(model, featurizer, [_example(LINES[:2], "the north")])
    assert model.W.weights and not model.W.trainable_weights
    assert all("W" not in w.path for w in model.trainable_weights)
