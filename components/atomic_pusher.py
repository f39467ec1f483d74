"""AtomicPusher: the standard Pusher, except that a push appears all at once or not at all.

The standard filesystem push copies into ``<base>/<version>/`` file by file (``saved_model.pb`` last); a run
killed midway leaves a numbered directory that TF Serving would try to load. Here the model is copied into a
hidden staging directory and renamed to its version number (``data.atomic.replace_directory``), and staging left
by a killed run is removed first. Two pushes into one local serving directory (two pipelines serving one model)
take turns under a lock there, so neither takes the other's version nor clears the other's staging.
"""

from __future__ import annotations

import posixpath
import time
from typing import Any

from absl import logging
from tfx.components.pusher import executor as pusher_executor
from tfx.components.pusher.component import Pusher
from tfx.dsl.components.base import executor_spec
from tfx.dsl.io import fileio
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, proto_utils

from data.atomic import clear_leftovers, one_writer, replace_directory
from models.gfile import GFILE


def push_atomically(model_path: str, base_directory: str) -> tuple[str, str]:
    """Copy ``model_path`` to ``base_directory/<unix time>`` (a later number when that one is taken); returns
    (serving path, version)."""
    fileio.makedirs(base_directory)
    # Two pushes into one local serving directory (two pipelines serving one model) take turns.
    with one_writer(base_directory, wait=True):
        clear_leftovers(base_directory, fs=GFILE)
        version = int(time.time())
        while fileio.exists(posixpath.join(base_directory, str(version))):
            version += 1
        serving_path = posixpath.join(base_directory, str(version))
        replace_directory(serving_path, lambda staging: io_utils.copy_dir(model_path, staging), GFILE)
    return serving_path, str(version)


class Executor(pusher_executor.Executor):
    def Do(self, input_dict: dict[str, list], output_dict: dict[str, list],  # noqa: N802 (TFX API)
           exec_properties: dict[str, Any]) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        model_push = artifact_utils.get_single_instance(output_dict[standard_component_specs.PUSHED_MODEL_KEY])
        if not self.CheckBlessing(input_dict):
            self._MarkNotPushed(model_push)
            return
        destination = pusher_pb2.PushDestination()
        proto_utils.json_to_proto(exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination)
        if destination.WhichOneof("destination") != "filesystem":
            raise NotImplementedError("AtomicPusher pushes to a filesystem destination only")
        model_path = self.GetModelPath(input_dict)
        serving_path, version = push_atomically(model_path, destination.filesystem.base_directory)
        io_utils.copy_dir(model_path, model_push.uri)
        self._MarkPushed(model_push, pushed_destination=serving_path, pushed_version=version)
        logging.info("Model pushed to %s.", serving_path)


def AtomicPusher(model: Any, model_blessing: Any, base_directory: str) -> Pusher:  # noqa: N802 (component)
    return Pusher(model=model, model_blessing=model_blessing,
                  push_destination=pusher_pb2.PushDestination(
                      filesystem=pusher_pb2.PushDestination.Filesystem(base_directory=base_directory)),
                  custom_executor_spec=executor_spec.ExecutorClassSpec(Executor))
