"""What a model needs besides the examples: the candidate set and the KB facts, stored inside the Examples artifact.

The ExampleGen writes ``<examples.uri>/corpus/resources.json`` next to the ``Split-*`` folders, so candidates and KB
travel with the examples (same artifact, same lineage) instead of as a path read behind the pipeline's back.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from tfx.dsl.io import fileio

RESOURCES_DIR = "corpus"
RESOURCES_FILE = "resources.json"


@dataclass(frozen=True)
class CorpusResources:
    tasks: tuple[int, ...]
    candidates: tuple[str, ...]
    facts: tuple[tuple[str, str, str], ...]


def resources_path(examples_uri: str) -> str:
    return posixpath.join(examples_uri, RESOURCES_DIR, RESOURCES_FILE)


def write_text_atomically(path: str, text: str) -> None:
    """Write through TFX's filesystem layer (local or ``gs://``) to a temporary name, then rename: a reader never
    sees half a file."""
    fileio.makedirs(posixpath.dirname(path))
    staging = path + ".tmp"
    with fileio.open(staging, "w") as handle:
        handle.write(text)
    fileio.rename(staging, path, overwrite=True)


def write_resources(examples_uri: str, resources: CorpusResources) -> None:
    write_text_atomically(resources_path(examples_uri), json.dumps({
        "tasks": list(resources.tasks), "candidates": list(resources.candidates),
        "facts": [list(fact) for fact in resources.facts]}))


def read_resources(examples_uri: str) -> CorpusResources:
    path = resources_path(examples_uri)
    if not fileio.exists(path):
        raise FileNotFoundError(f"{path}: the Examples artifact has no corpus resources; was it written by "
                                "DialogExampleGen?")
    with fileio.open(path, "r") as handle:
        raw = json.loads(handle.read())
    return CorpusResources(tuple(raw["tasks"]), tuple(raw["candidates"]), tuple(tuple(f) for f in raw["facts"]))
