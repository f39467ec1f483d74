"""What a model needs besides the examples: the candidate set and the KB facts, stored inside the Examples artifact.

The ExampleGen writes ``<examples.uri>/corpus/resources.json`` next to the ``Split-*`` folders, so candidates and KB
travel with the examples (same artifact, same lineage) instead of as a path read behind the pipeline's back.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from tfx.dsl.io import fileio

from data.atomic import write_text_atomic
from models.gfile import GFILE

RESOURCES_DIR = "corpus"
RESOURCES_FILE = "resources.json"


@dataclass(frozen=True)
class CorpusResources:
    tasks: tuple[int, ...]
    candidates: tuple[str, ...]
    facts: tuple[tuple[str, str, str], ...]


def resources_path(examples_uri: str) -> str:
    return posixpath.join(examples_uri, RESOURCES_DIR, RESOURCES_FILE)


def write_resources(examples_uri: str, resources: CorpusResources) -> None:
    write_text_atomic(resources_path(examples_uri), json.dumps({
        "tasks": list(resources.tasks), "candidates": list(resources.candidates),
        "facts": [list(fact) for fact in resources.facts]}), GFILE)


def read_resources(examples_uri: str) -> CorpusResources:
    path = resources_path(examples_uri)
    if not fileio.exists(path):
        raise FileNotFoundError(f"{path}: the Examples artifact has no corpus resources; was it written by "
                                "DialogExampleGen?")
    with fileio.open(path, "r") as handle:
        raw = json.loads(handle.read())
    return CorpusResources(tuple(raw["tasks"]), tuple(raw["candidates"]), tuple(tuple(f) for f in raw["facts"]))
