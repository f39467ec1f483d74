"""Fixtures shared by the tests beside this file."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=1, dialogs_per_split=4, tasks=(1, 3)), out, runner="local")
    return out
