"""The exported SavedModel: featuriser, network and candidate set in one self-contained module.

Signatures (DESIGN.md): ``serving_default`` on raw text (``memory`` [B, M] and ``memory_speaker`` [B, M]
strings padded with "", ``query`` [B]) and ``serving_examples`` on serialized tf.Examples (features ``memory``,
``memory_speaker``, ``query``); both return the top-k ``responses`` with their ``scores`` and the per-hop
``attention`` over memory slots (most recent memory first).
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from models.embeddings import SupervisedEmbeddings
from models.features import FeatureSpec, Featurizer
from models.memn2n import MemN2N

SPEC_ASSET = "feature_spec.json"


class DialogServingModule(tf.Module):
    def __init__(self, spec: FeatureSpec, model: MemN2N | SupervisedEmbeddings, top_k: int = 10) -> None:
        super().__init__()
        self.featurizer = Featurizer(spec)
        self.model = model
        self.candidates = tf.constant(spec.candidates)
        self.top_k = min(top_k, len(spec.candidates))
        self._spec_json = spec.to_json()  # written to assets/ by export(); not needed to serve

    def rank(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        features = self.featurizer(memory, memory_speaker, query)
        logits, attention = self.model.predict_with_attention(features)
        top = tf.math.top_k(logits, k=self.top_k)
        return {"responses": tf.gather(self.candidates, top.indices), "scores": top.values,
                "indices": top.indices, "attention": attention}

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="memory"),
                                  tf.TensorSpec([None, None], tf.string, name="memory_speaker"),
                                  tf.TensorSpec([None], tf.string, name="query")])
    def serve(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        return self.rank(memory, memory_speaker, query)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve_examples(self, examples: tf.Tensor) -> dict[str, tf.Tensor]:
        parsed = tf.io.parse_example(examples, {
            "memory": tf.io.VarLenFeature(tf.string),
            "memory_speaker": tf.io.VarLenFeature(tf.string),
            "query": tf.io.FixedLenFeature([], tf.string),
        })
        return self.rank(tf.sparse.to_dense(parsed["memory"], default_value=""),
                         tf.sparse.to_dense(parsed["memory_speaker"], default_value=""), parsed["query"])


def export(module: DialogServingModule, directory: str | Path) -> None:
    """Write the SavedModel to ``directory`` (a temporary sibling first, then renamed into place)."""
    directory = Path(directory)
    staging = directory.with_name(f".{directory.name}.tmp")
    if staging.exists():
        tf.io.gfile.rmtree(str(staging))
    tf.saved_model.save(module, str(staging), signatures={
        "serving_default": module.serve.get_concrete_function(),
        "serving_examples": module.serve_examples.get_concrete_function(),
    })
    (staging / "assets").mkdir(exist_ok=True)
    (staging / "assets" / SPEC_ASSET).write_text(module._spec_json)
    if directory.exists():
        old = directory.with_name(f".{directory.name}.old")
        directory.rename(old)
        staging.rename(directory)
        tf.io.gfile.rmtree(str(old))
    else:
        staging.rename(directory)
