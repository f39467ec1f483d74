"""The atomic writes on a file system that is not the local disk (TensorFlow's ram://), as gs:// would be used.

Directories are not renamed here: ram:// keeps files under flat names and cannot rename a directory, which
gs:// does (object by object) and the local disk does at once."""

from __future__ import annotations

import uuid

import tensorflow as tf

from data.atomic import clear_leftovers, write_text_atomic
from models.gfile import GFILE


def test_atomic_writes_work_on_a_remote_scheme() -> None:
    root = f"ram://atomic-{uuid.uuid4().hex}"
    write_text_atomic(f"{root}/reports/data_report.json", "{}", GFILE)
    write_text_atomic(f"{root}/reports/data_report.json", '{"ok": 1}', GFILE)
    with tf.io.gfile.GFile(f"{root}/reports/data_report.json") as handle:
        assert handle.read() == '{"ok": 1}'
    assert tf.io.gfile.listdir(f"{root}/reports") == ["data_report.json"]
    write_text_atomic(f"{root}/reports/.data_report.json.tmp-0123abcd", "half", GFILE)  # as a killed run leaves
    write_text_atomic(f"{root}/reports/notes.txt", "mine", GFILE)
    assert clear_leftovers(f"{root}/reports", fs=GFILE) == [".data_report.json.tmp-0123abcd"]
    assert sorted(tf.io.gfile.listdir(f"{root}/reports")) == ["data_report.json", "notes.txt"]
