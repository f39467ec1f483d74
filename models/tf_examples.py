"""Turn examples as tf.Examples (one per bot turn, the features the README lists), and back.

The ExampleGen writes them, the Trainer reads them back into :class:`TurnExample`, and the exported model's
``serving_examples`` signature parses the same feature names, so the three cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from models.examples import TurnExample

NO_CHALLENGE = "none"
NOT_A_CANDIDATE = -1
LABEL_KEY = "answer_index"


def to_tf_example(example: TurnExample, answer_index: int, challenge: str = NO_CHALLENGE) -> tf.train.Example:
    """``answer_index`` is the gold answer's position in the candidate set, -1 when it is not a candidate.

    The features are filled in place (``extend``), not built as Feature messages and copied into the map: the
    ExampleGen writes every bot turn, and this is faster, with the same message."""
    out = tf.train.Example()
    feature = out.features.feature
    for key, values in (("dialog_id", [example.dialog_id]), ("task", [example.task]), ("split", [example.split]),
                        ("challenge", [challenge]), ("memory", example.memory),
                        ("memory_speaker", example.memory_speaker), ("query", [example.query]),
                        ("answer", [example.answer])):
        feature[key].bytes_list.value.extend([v.encode("utf-8") for v in values])
    feature["turn"].int64_list.value.append(example.turn)
    feature[LABEL_KEY].int64_list.value.append(answer_index)
    return out


def from_tf_example(serialized: bytes) -> TurnExample:
    features = tf.train.Example.FromString(serialized).features.feature

    def texts(key: str) -> tuple[str, ...]:
        return tuple(v.decode("utf-8") for v in features[key].bytes_list.value)

    def text(key: str) -> str:
        values = texts(key)
        if len(values) != 1:
            raise ValueError(f"tf.Example feature {key!r} must hold one string, found {len(values)}")
        return values[0]

    return TurnExample(text("dialog_id"), text("task"), text("split"), int(features["turn"].int64_list.value[0]),
                       texts("memory"), texts("memory_speaker"), text("query"), text("answer"))


def read_tf_examples(patterns: Sequence[str], compression: str = "GZIP", batch_size: int = 4096
                     ) -> list[TurnExample]:
    """Every example of the TFRecord files matching ``patterns`` (as TFX writes them: gzip), in file order.

    Records leave the dataset ``batch_size`` at a time: one eager tensor per record was most of the time the
    pipeline's Trainers spent reading and parsing each 47k-turn split."""
    files = sorted(path for pattern in patterns for path in tf.io.gfile.glob(pattern))
    if not files:
        raise FileNotFoundError(f"no TFRecord files match {list(patterns)}")
    batches = tf.data.TFRecordDataset(files, compression_type=compression).batch(batch_size)
    return [from_tf_example(record) for batch in batches for record in batch.numpy()]
