"""The one way to load an exported model: a SavedModel directory, or a TF Serving base directory of versions.

``dialog evaluate``, ``explain``, ``chat``, the paper tables and the serving benchmark all load through here, and
:class:`SavedModelRanker` calls the model exactly as a serving client would (raw text in, ranked responses out).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from data.progress import bar
from data.reading import FormatError, check_regular, read_bytes
from models.examples import TurnExample, batched_outputs
from models.gfile import GFILE

_VERSION = re.compile(r"\d+")


def resolve_model_dir(directory: str | Path) -> Path:
    """A SavedModel directory, or a TF Serving base directory (``<dir>/<version>/``): its newest version."""
    directory = Path(directory)
    if (directory / "saved_model.pb").is_file():
        return directory
    versions = sorted((int(p.name), p) for p in directory.glob("*") if _VERSION.fullmatch(p.name)
                      and (p / "saved_model.pb").is_file()) if directory.is_dir() else []
    if not versions:
        raise FileNotFoundError(f"{directory}: no saved_model.pb, and not a directory of numbered model versions "
                                "(expected a model written by dialog train, or e.g. "
                                "pipeline_output/serving_model/memn2n)")
    return versions[-1][1]


SIGNATURES = ("serving_default", "serving_speakers", "serving_examples")


class ModelError(ValueError):
    """A directory that holds a SavedModel this project cannot serve (unreadable, truncated, or not ours)."""


# The asset every model this project exports carries (models.serving.export writes it): what its featuriser was
# built from, or, for the template and state rankers, their own description; read to name the model's candidates.
SPEC_ASSET = "feature_spec.json"
# The spec is one line of JSON: a paper-scale Movie Dialog model's (its whole vocabulary and candidate set) is
# several megabytes, past the corpus files' line bound. Its bound is a size no model here comes near.
MAX_SPEC_BYTES = 256 * 2**20
# The key of a spec that describes the model's long-term KB memory (a Movie Dialog model holds its KB and makes no
# API calls; models.movie.streamed writes it; chat, `dialog chat --kb` and the run report read it).
LONG_TERM_MEMORY = "long_term_memory"
_REMEDY = "the model is damaged: train it again (dialog train --out) or push it again (dialog pipeline)"


def spec_path(directory: str | Path) -> str:
    """Where a model keeps its spec (a string: the model may be on ``gs://``, which ``Path`` would mangle)."""
    return f"{os.fspath(directory)}/assets/{SPEC_ASSET}"


def read_spec(directory: str | Path, required: bool = True) -> dict[str, Any] | None:
    """The model's ``assets/feature_spec.json``, a JSON object. Every read of a model's asset goes through here, so
    that a missing (``required``; None otherwise), unreadable, truncated or hand-edited file is a
    :class:`ModelError` naming it, not a JSONDecodeError after the work is done."""
    path = spec_path(directory)
    if not tf.io.gfile.exists(path):
        if not required:
            return None
        raise ModelError(f"{path}: missing (every model dialog train writes has it); {_REMEDY}")
    try:
        # A regular file only (a FIFO would block), one line of at most MAX_SPEC_BYTES.
        spec = json.loads(read_bytes(path, GFILE, max_line=MAX_SPEC_BYTES).decode("utf-8"))
    except FormatError as error:  # not a regular file, a line past the bound, cannot be read
        raise ModelError(f"{error}; {_REMEDY}") from None
    except json.JSONDecodeError as error:
        raise ModelError(f"{path}: not valid JSON ({error.msg}: line {error.lineno} column {error.colno}); "
                         f"{_REMEDY}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not UTF-8 text; {_REMEDY}") from None
    except (OSError, tf.errors.OpError) as error:  # a directory in its place, no permission
        reason = str(getattr(error, "message", None) or error).strip().splitlines()[0][:200]
        raise ModelError(f"{path}: cannot be read ({reason})") from None
    if not isinstance(spec, dict):
        raise ModelError(f"{path}: not a JSON object; {_REMEDY}")
    candidates = spec.get("candidates", [])
    if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates):
        raise ModelError(f'{path}: "candidates" is not a list of strings; {_REMEDY}')
    return spec


def holds_long_term_memory(directory: str | Path) -> bool:
    """Whether the model's spec says it holds its own long-term KB memory (:data:`LONG_TERM_MEMORY`): what it is,
    read from the model rather than guessed from a method's name."""
    return LONG_TERM_MEMORY in (read_spec(directory, required=False) or {})


def _only_regular_files(directory: Path) -> None:
    """Refuse a local model with a file that is not a regular file (a FIFO as ``saved_model.pb`` or a variables
    shard would block TensorFlow's loader for ever, a link to /dev/zero never end it); a URL holds none."""
    if "://" in str(directory):
        return
    for root, _, names in os.walk(directory):
        for name in names:
            try:
                check_regular(os.path.join(root, name))
            except FormatError as error:
                raise ModelError(f"{error}; {_REMEDY}") from None


def load_model(directory: str | Path) -> tuple[Path, Any]:
    """The resolved SavedModel directory and the loaded model (its ``signatures`` are the serving ones).

    A directory without a model is a :class:`FileNotFoundError`; a SavedModel that cannot be read (a damaged
    ``saved_model.pb``, truncated variables, a damaged or missing ``assets/feature_spec.json``) or that another
    program wrote (without this project's signatures) is a :class:`ModelError`: one line naming the path and what
    is wrong, before anything is ranked."""
    resolved = resolve_model_dir(directory)
    _only_regular_files(resolved)
    spec = read_spec(resolved, required=False)  # a damaged asset is named before paying for loading the model
    try:
        loaded = tf.saved_model.load(str(resolved))
    except Exception as error:  # protobuf, TensorFlow and OS errors alike: the model cannot be read
        first = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
        raise ModelError(f"{resolved}: not a readable SavedModel ({type(error).__name__}: {first})") from None
    missing = [name for name in SIGNATURES if name not in loaded.signatures]
    if missing:
        raise ModelError(f"{resolved}: a SavedModel, but not one dialog train wrote (no {', '.join(missing)} "
                         "signature)")
    if spec is None:
        read_spec(resolved)  # ours, yet without its asset: named
    return resolved, loaded


class SavedModelRanker:
    """An exported model as a :class:`~models.methods.Ranker`, called through its ``serving_speakers`` signature."""

    def __init__(self, directory: str | Path) -> None:
        self.directory, self.loaded = load_model(directory)
        self.serve = self.loaded.signatures["serving_speakers"]

    def outputs(self, examples: Sequence[TurnExample], batch_size: int = 256) -> dict[str, np.ndarray]:
        """The signature's ``responses`` (bytes), ``scores`` and ``indices`` [N, top_k], in batches."""
        def call(memory: np.ndarray, speaker: np.ndarray, query: np.ndarray) -> dict[str, tf.Tensor]:
            return self.serve(memory=tf.constant(memory, tf.string), memory_speaker=tf.constant(speaker, tf.string),
                              query=tf.constant(query, tf.string))

        with bar(len(examples), "ranking", "turn") as progress:
            return batched_outputs(examples, call, ("responses", "scores", "indices"), batch_size, progress.update)

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The ``k`` best responses of each example (at most the model's top_k), best first."""
        if not examples:
            return []
        return [[r.decode("utf-8") for r in row[:k]] for row in self.outputs(examples)["responses"]]


@dataclass(frozen=True)
class ExportedRanker:
    """The SavedModel a method has just written, loaded when first asked to rank: ``dialog train`` and the TFX
    Trainer never rank, so they never pay for loading what they exported."""

    directory: Path

    @cached_property
    def loaded(self) -> SavedModelRanker:
        return SavedModelRanker(self.directory)

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        return self.loaded.rank(examples, k)
