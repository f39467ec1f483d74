"""A small banking corpus shared by the networks and tables tests (generated once per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.banking.generation import BankingPlan, generate
from data.layout import TaskFiles, discover


@pytest.fixture(scope="session")
def banking(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TaskFiles]:
    out = tmp_path_factory.mktemp("banking")
    generate(BankingPlan(seed=1, train_dialogs=15, dev_dialogs=3, test_dialogs=3), out)
    return out, discover(out)[7]
