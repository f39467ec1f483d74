"""TensorFlow's file systems (local paths, ``gs://``, ``ram://``, ...) as a :class:`data.atomic.FileSystem`, so the
atomic writes of exported models and pipeline artifacts work where the pipeline runs, not only on this disk."""

from __future__ import annotations

from typing import IO

import tensorflow as tf


class GFileSystem:
    def open(self, path: str, mode: str) -> IO:
        return tf.io.gfile.GFile(path, mode)

    def exists(self, path: str) -> bool:
        return tf.io.gfile.exists(path)

    def isdir(self, path: str) -> bool:
        return tf.io.gfile.isdir(path)

    def makedirs(self, path: str) -> None:
        tf.io.gfile.makedirs(path)

    def rename(self, source: str, target: str) -> None:
        tf.io.gfile.rename(source, target, overwrite=True)

    def remove(self, path: str) -> None:
        tf.io.gfile.remove(path)

    def rmtree(self, path: str) -> None:
        tf.io.gfile.rmtree(path)

    def listdir(self, path: str) -> list[str]:
        return tf.io.gfile.listdir(path)


GFILE = GFileSystem()
