"""Child process of the distribution test: two logical CPU devices must be set before TensorFlow starts."""

from __future__ import annotations

import json
import sys

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

from data.layout import discover  # noqa: E402 (after the devices are set)
from models.training import MemN2NConfig, train  # noqa: E402

config = MemN2NConfig(match_type=True, hops=2, embedding_dim=32, epochs=int(sys.argv[2]), batch_size=32)
results = {}
for name, strategy in (("default", None), ("mirrored", tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))):
    scope = strategy.scope() if strategy else tf.distribute.get_strategy().scope()
    with scope:
        summary = train(discover(sys.argv[1])[1], config)
    results[name] = {"replicas": summary["replicas"], "dev": summary["dev_per_response_accuracy"]}
print(json.dumps(results))
