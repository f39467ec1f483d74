"""Child process of the multi-worker test: one worker (or the single process) of the DialogTrainer's executor.

    multi_worker_run.py CORPUS EXAMPLES_DIR ARTIFACTS_DIR EPOCHS

``TF_CONFIG`` (set by the test, or not: one process) says which worker it is. It writes the corpus's train and eval
turns as the ExampleGen does (gzipped tf.Examples and the corpus resources) into its own EXAMPLES_DIR, then runs the
executor's ``Do`` as a Vertex AI job's worker does (``tfx.scripts.run_executor``) with the Model and ModelRun
artifacts under ARTIFACTS_DIR, which the workers of one job share.
"""

from __future__ import annotations

import json
import posixpath
import sys

import tensorflow as tf
from tfx.proto import trainer_pb2
from tfx.types import artifact_utils, standard_artifacts
from tfx.utils import proto_utils

from components.corpus_resources import write_resources
from components.dialog_example_gen import _file_examples, corpus_resources, split_pattern
from components.dialog_trainer import METHOD_KEY
from components.trainer_base import Executor

corpus, examples_dir, artifacts_dir, epochs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
SPLITS = ("train", "eval")

# No TensorFlow op yet (the executor creates the strategy first): protos and a record writer only.
resources = corpus_resources(corpus, [split_pattern((1,), split) for split in SPLITS])
candidates = {candidate: index for index, candidate in enumerate(resources.candidates)}
for split in SPLITS:
    tf.io.gfile.makedirs(posixpath.join(examples_dir, f"Split-{split}"))
    files = sorted(tf.io.gfile.glob(posixpath.join(corpus, split_pattern((1,), split))))
    with tf.io.TFRecordWriter(posixpath.join(examples_dir, f"Split-{split}", "data.gz"), "GZIP") as writer:
        for path in files:
            for record in _file_examples(path, 1, posixpath.basename(path).rsplit("-", 1)[1][:-4], candidates):
                writer.write(record)
write_resources(examples_dir, resources)

examples = standard_artifacts.Examples()
examples.uri, examples.split_names = examples_dir, artifact_utils.encode_split_names(list(SPLITS))
model, model_run = standard_artifacts.Model(), standard_artifacts.ModelRun()
model.uri, model_run.uri = posixpath.join(artifacts_dir, "model"), posixpath.join(artifacts_dir, "model_run")
config = {METHOD_KEY: "memn2n_match", "model": "memn2n", "match_type": True, "hops": 2, "embedding_dim": 32,
          "epochs": epochs, "batch_size": 32,
          # What a Vertex AI job's replicas find there too (components.vertex_training): no setting of the method.
          "ai_platform_enable_vertex": True, "ai_platform_vertex_region": "europe-west1"}
Executor().Do({"examples": [examples]}, {"model": [model], "model_run": [model_run]}, {
    "train_args": proto_utils.proto_to_json(trainer_pb2.TrainArgs(splits=["train"])),
    "eval_args": proto_utils.proto_to_json(trainer_pb2.EvalArgs(splits=["eval"])),
    "run_fn": "components.dialog_trainer.run_fn", "custom_config": json.dumps(config)})
print(json.dumps({"done": True}))
