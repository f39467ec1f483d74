"""TF Serving's REST predict request in row format, answered by a loaded SavedModel exactly as the server would.

    {"instances": [{"memory": ["hi", "hello what can i help you with today"], "query": "may i have a table"}]}

``memory`` is the history, oldest first, KB results included; rows of one request must have equal length, so a
client pads shorter histories at the end with "" (the model reads "" at the end as padding). The answer is
``{"predictions": [{"responses": [...], "scores": [...], "indices": [...], "attention": [[...]]}]}`` (a Movie
Dialog model also gives ``memories``: the texts its attention weighs, KB sentences included, in slot order). Everything
wrong with a request is a :class:`RequestError` naming the instance and field.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

INPUTS = ("memory", "query")
SIGNATURE = "serving_default"  # the one signature that takes row-format memory and query
# The most instances one request may hold: a huge request holds the process for its whole time and memory
# (docs/pipeline.md); a client sends batches.
MAX_INSTANCES = 1024


class RequestError(ValueError):
    pass


def is_text(value: str) -> bool:
    """Whether ``value`` can be sent as UTF-8 (a JSON "\\ud800" escape gives a lone surrogate, which cannot)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def request_tensors(request: Any) -> dict[str, tf.Tensor]:
    """Validate a row-format request and stack it into the ``serving_default`` inputs."""
    if not isinstance(request, dict) or not isinstance(request.get("instances"), list):
        raise RequestError('a request is a JSON object {"instances": [...]}')
    unknown = sorted(set(request) - {"instances", "signature_name"})
    if unknown:
        raise RequestError(f"the request has unknown fields {unknown}; expected instances and signature_name")
    if request.get("signature_name", SIGNATURE) != SIGNATURE:
        raise RequestError(f"signature_name {request['signature_name']!r}: row-format requests are answered by "
                           f"{SIGNATURE!r} only (serving_examples takes serialized tf.Examples)")
    instances = request["instances"]
    if not instances:
        raise RequestError('"instances" is empty')
    if len(instances) > MAX_INSTANCES:
        raise RequestError(f'"instances" holds {len(instances):,}; at most {MAX_INSTANCES:,} a request: send '
                           "them in batches")
    memories, queries = [], []
    for i, instance in enumerate(instances):
        if not isinstance(instance, dict):
            raise RequestError(f"instances[{i}] must be an object with {list(INPUTS)}")
        unknown = sorted(set(instance) - set(INPUTS))
        if unknown:
            raise RequestError(f"instances[{i}] has unknown fields {unknown}; expected {list(INPUTS)}")
        query = instance.get("query")
        if not isinstance(query, str):
            raise RequestError(f'instances[{i}].query must be a string (use "<SILENCE>" when the user said '
                               f"nothing), got {type(query).__name__}")
        memory = instance.get("memory", [])
        if not isinstance(memory, list) or not all(isinstance(m, str) for m in memory):
            raise RequestError(f"instances[{i}].memory must be a list of strings (the history, oldest first)")
        for field, text in (("query", query), *((f"memory[{j}]", m) for j, m in enumerate(memory))):
            if not is_text(text):
                raise RequestError(f"instances[{i}].{field} is not valid Unicode text (a lone surrogate)")
        memories.append(memory)
        queries.append(query)
    width = {len(m) for m in memories}
    if len(width) > 1:
        raise RequestError(f"instances have memories of different lengths {sorted(width)}; pad them at the end "
                           'with "" (row format needs equal shapes)')
    memory_array = np.array(memories, dtype=object).reshape(len(memories), width.pop())
    return {"memory": tf.constant(memory_array, tf.string), "query": tf.constant(queries, tf.string)}


def predict(signature: Any, request: Any) -> dict[str, list[dict[str, Any]]]:
    """Run ``signature`` (the loaded ``serving_default``) on a row-format request; row-format response."""
    outputs = signature(**request_tensors(request))
    rows = []
    for i in range(int(outputs["responses"].shape[0])):
        row = {"responses": [r.decode("utf-8") for r in outputs["responses"][i].numpy()],
               "scores": outputs["scores"][i].numpy().tolist(),
               "indices": outputs["indices"][i].numpy().tolist(),
               "attention": outputs["attention"][i].numpy().tolist()}
        if "template" in outputs:  # the template ranker also says which template it filled
            row["template"] = outputs["template"][i].numpy().decode("utf-8")
        rows.append(row)
    return {"predictions": rows}
