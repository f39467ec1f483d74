"""Turn examples through TFRecord files and back, as the ExampleGen writes them and the Trainers read them."""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf

from models.examples import TurnExample
from models.tf_examples import read_tf_examples, to_tf_example


def test_records_come_back_whole_and_in_file_order_across_batches(tmp_path: Path) -> None:
    examples = [TurnExample(f"babi-1/dev/{i}", "babi-1", "dev", i % 3, tuple(f"line {j}" for j in range(i)),
                            tuple("user" if j % 2 == 0 else "bot" for j in range(i)), f"query {i}", f"answer {i}")
                for i in range(7)]
    for name, part in (("data-00000-of-00002.gz", examples[:4]), ("data-00001-of-00002.gz", examples[4:])):
        with tf.io.TFRecordWriter(str(tmp_path / name), options="GZIP") as writer:
            for i, example in enumerate(part):
                writer.write(to_tf_example(example, answer_index=i).SerializeToString())
    for batch_size in (1, 3, 4096):  # batches that split a file, straddle two, or hold everything
        assert read_tf_examples([str(tmp_path / "*.gz")], batch_size=batch_size) == examples
    with pytest.raises(FileNotFoundError, match="no TFRecord files match"):
        read_tf_examples([str(tmp_path / "missing-*")])
