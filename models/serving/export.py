"""The exported SavedModel: featuriser, network and candidate set in one self-contained module.

Signatures, all returning the top-k ``responses`` with their ``scores``, candidate ``indices`` and the
per-hop ``attention`` over memory slots (most recent memory first):

- ``serving_default``: raw text as a TF Serving client sends it, ``memory`` [B, M] (oldest first, padded at the
  end with "") and ``query`` [B]. Speakers follow the dialog-bAbI layout (:func:`infer_speakers`).
- ``serving_speakers``: the same with explicit ``memory_speaker`` [B, M] (``user`` / ``bot``, "" for padding).
- ``serving_examples``: serialized tf.Examples (features ``memory``, ``memory_speaker``, ``query``), for TFMA.
"""

from __future__ import annotations

import os
from pathlib import Path

import keras
import tensorflow as tf

from data.atomic import clear_leftovers, replace_directory, write_text_atomic
from models.embeddings import SupervisedEmbeddings
from models.features import FeatureSpec, Featurizer
from models.gfile import GFILE
from models.memn2n import MemN2N
from models.serving.ranker import SPEC_ASSET

KB_RESULT_PATTERN = r"\S+ R_\S+ .+"  # "entity R_attribute value": an API output, spoken by the user side


def infer_speakers(memory: tf.Tensor) -> tf.Tensor:
    """Speakers of a memory [B, M] laid out as in dialog-bAbI: KB result lines are ``user``, the other
    utterances alternate ``user``, ``bot``, ... from the first; "" after the last non-empty entry is padding
    (an empty utterance inside the history, as task 6 has, keeps its place)."""
    filled = tf.not_equal(memory, "")
    positions = tf.range(tf.shape(memory)[1])[tf.newaxis, :]
    last = tf.reduce_max(tf.where(filled, positions, -1), axis=1, keepdims=True)
    present = positions <= last
    is_kb = tf.strings.regex_full_match(memory, KB_RESULT_PATTERN)
    turn_position = tf.cumsum(tf.cast(present & ~is_kb, tf.int32), axis=1) - 1
    speaker = tf.where(is_kb | (turn_position % 2 == 0), "user", "bot")
    return tf.where(present, speaker, "")


def hold_models(module: tf.Module, **models: keras.Model) -> None:
    """Give a serving module the Keras models it calls, by name, untracked: saving would walk each model and
    serialise every function it traced in training (its train and predict steps, the optimizer's slots).
    :func:`export` tracks their tf.Variables instead (a model never called is built by tracing a signature
    first)."""
    held = [*getattr(module, "_held_models", ()), *models.values()]
    module._held_models = module._no_dependency(held)
    for name, model in models.items():
        setattr(module, name, module._no_dependency(model))


def _track_held_weights(module: tf.Module) -> None:
    # As a collection: loaders that restore by the TF1 saver (TF Serving, saved_model_cli run) need Keras 3's
    # variables there anyway (keras-team/keras#20095).
    module.model_variables = [weight.value for model in getattr(module, "_held_models", ()) for weight in model.weights]


class DialogServingModule(tf.Module):
    def __init__(self, spec: FeatureSpec, model: MemN2N | SupervisedEmbeddings, top_k: int = 10) -> None:
        super().__init__()
        self.featurizer = Featurizer(spec)
        hold_models(self, model=model)
        self.candidates = tf.constant(spec.candidates)
        self.top_k = min(top_k, len(spec.candidates))
        self._spec_json = spec.to_json()  # written to assets/ by export(); not needed to serve

    def rank(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        features = self.featurizer(memory, memory_speaker, query)
        logits, attention = self.model.predict_with_attention(features)
        top = tf.math.top_k(logits, k=self.top_k)
        return {"responses": tf.gather(self.candidates, top.indices), "scores": top.values,
                "indices": top.indices, "attention": attention}

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, None], tf.string, name="memory"),
                                  tf.TensorSpec([None], tf.string, name="query")])
    def serve(self, memory: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        # Each signature calls serve_speakers' one graph of rank: exporting traces the model once, not three times.
        return self.serve_speakers(memory, infer_speakers(memory), query)

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, None], tf.string, name="memory"),
                                  tf.TensorSpec([None, None], tf.string, name="memory_speaker"),
                                  tf.TensorSpec([None], tf.string, name="query")])
    def serve_speakers(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        return self.rank(memory, memory_speaker, query)

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve_examples(self, examples: tf.Tensor) -> dict[str, tf.Tensor]:
        parsed = tf.io.parse_example(examples, {
            "memory": tf.io.VarLenFeature(tf.string),
            "memory_speaker": tf.io.VarLenFeature(tf.string),
            "query": tf.io.FixedLenFeature([], tf.string),
        })
        return self.serve_speakers(tf.sparse.to_dense(parsed["memory"], default_value=""),
                                   tf.sparse.to_dense(parsed["memory_speaker"], default_value=""), parsed["query"])


# What a SavedModel directory of ours holds (tf.saved_model.save, the feature spec among the assets).
SAVED_MODEL_ENTRIES = frozenset({"saved_model.pb", "variables", "assets", "fingerprint.pb"})


class OutputRefused(ValueError):
    """``--out`` names something that is not a model this project wrote: it is never replaced."""


def is_exported_model(directory: str) -> bool:
    """A SavedModel written by :func:`export` (it carries the feature spec among its assets)."""
    return GFILE.exists(f"{directory}/saved_model.pb") and GFILE.exists(f"{directory}/assets/{SPEC_ASSET}")


def prepare_output(directory: str | Path) -> None:
    """Check, before any training, that a model may be written to ``directory``: a new path, an empty directory,
    or a model exported here earlier (replaced whole once the new one is written). Anything else (a corpus, a
    notes folder, ``.``, a symbolic link) is refused with :class:`OutputRefused`, so no file of the user's is ever
    lost. Staging
    left beside it by a killed export is cleared."""
    path = os.fspath(directory).rstrip("/") or "/"
    parent, name = os.path.split(path)
    if not name or name in (".", ".."):
        raise OutputRefused(f"{directory}: not a place for a model; give --out a new directory name")
    if os.path.islink(path):  # replacing it would empty its target and leave the link's staging behind
        raise OutputRefused(f"{directory}: is a symbolic link (to {os.readlink(path)}); it is left as it is: give "
                            "--out the directory itself, or a new name")
    clear_leftovers(parent or ".", name, GFILE)
    if not GFILE.exists(path):
        return
    if not GFILE.isdir(path):
        raise OutputRefused(f"{directory}: exists and is not a directory; give --out a new directory name")
    if GFILE.listdir(path) and not is_exported_model(path):
        raise OutputRefused(f"{directory}: exists and is not a model written by dialog train (no saved_model.pb with "
                            f"assets/{SPEC_ASSET}); it is left as it is: give --out a new directory, or remove it "
                            "yourself")
    others = sorted({name.rstrip("/") for name in GFILE.listdir(path)} - SAVED_MODEL_ENTRIES)
    if others:  # a report or notes the user put beside the model would go with it
        raise OutputRefused(f"{directory}: holds {', '.join(others)}, which dialog train did not write and would "
                            "delete with the old model; move them, or give --out a new directory")


def export(module: DialogServingModule, directory: str | Path) -> None:
    """Write the SavedModel to ``directory`` (local or remote, e.g. ``gs://``): staged beside it, then renamed into
    place, so a killed run never leaves half a model; staging a killed export left is cleared first."""
    directory = os.fspath(directory)
    prepare_output(directory)

    def write(staging: str) -> None:
        # The tf.functions, not concrete functions traced here: saving traces the module's functions again in its
        # own context, so a signature traced beforehand was traced twice.
        signatures = {"serving_default": module.serve, "serving_speakers": module.serve_speakers,
                      "serving_examples": module.serve_examples}
        if not all(model.built for model in getattr(module, "_held_models", ())):
            module.serve_speakers.get_concrete_function()  # a model never called builds its weights when traced
        _track_held_weights(module)
        tf.saved_model.save(module, staging, signatures=signatures)
        write_text_atomic(f"{staging}/assets/{SPEC_ASSET}", module._spec_json, GFILE)

    replace_directory(directory, write, GFILE)
