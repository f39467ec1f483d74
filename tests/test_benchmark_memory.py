"""The benchmarks' peak memory counts the workers a measured command starts, not only its largest process."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _training_speed():
    spec = importlib.util.spec_from_file_location("training_speed", ROOT / "benchmarks" / "training_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_peak_memory_of_a_run_sums_its_process_tree() -> None:
    # a parent and its worker hold the same block at once: the largest process alone holds half of the tree
    hold = "import time; block = bytearray(200 * 2**20); time.sleep({})"
    code = (f"import subprocess, sys; {hold.format(0)}; "
            f"subprocess.run([sys.executable, '-c', {hold.format(2)!r}], check=True)")
    wall, peak_gb, _ = _training_speed().run([sys.executable, "-c", code])
    assert wall >= 2 and peak_gb >= 0.4
