"""TensorFlow's file systems (local paths, ``gs://``, ``ram://``, ...) as a :class:`data.atomic.FileSystem`, so the
atomic writes of exported models and pipeline artifacts work where the pipeline runs, not only on this disk.

A local path is removed by ``data.atomic`` itself: TensorFlow's ``isdir`` follows a symbolic link and its
``rmtree`` then empties the link's target, a directory the project never wrote."""

from __future__ import annotations

from typing import IO

import tensorflow as tf

from data.atomic import LOCAL, remove_entry


class GFileSystem:
    def open(self, path: str, mode: str) -> IO:
        return tf.io.gfile.GFile(path, mode)

    def exists(self, path: str) -> bool:
        return tf.io.gfile.exists(path)

    def isdir(self, path: str) -> bool:
        return tf.io.gfile.isdir(path) if "://" in path else LOCAL.isdir(path)

    def makedirs(self, path: str) -> None:
        tf.io.gfile.makedirs(path)

    def rename(self, source: str, target: str) -> None:
        tf.io.gfile.rename(source, target, overwrite=True)

    def remove(self, path: str) -> None:
        tf.io.gfile.remove(path)

    def rmtree(self, path: str) -> None:
        if "://" in path:
            tf.io.gfile.rmtree(path)
        else:
            remove_entry(path)

    def listdir(self, path: str) -> list[str]:
        return tf.io.gfile.listdir(path)


GFILE = GFileSystem()
