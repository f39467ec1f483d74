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
