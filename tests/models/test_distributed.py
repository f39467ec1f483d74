"""The training loop under ``tf.distribute``: MirroredStrategy over two logical CPU devices trains like the
default strategy (what a TFX Trainer with several GPUs or workers runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from data.babi.generation import GenerationPlan, generate

REPOSITORY = Path(__file__).resolve().parents[2]


def test_mirrored_strategy_over_two_devices_reaches_the_default_strategys_accuracy(tmp_path: Path) -> None:
    generate(GenerationPlan(seed=0, dialogs_per_split=30, tasks=(1,)), tmp_path, runner="local")
    child = subprocess.run([sys.executable, str(Path(__file__).with_name("distributed_run.py")), str(tmp_path), "4"],
                           capture_output=True, text=True, cwd=REPOSITORY, env={"PYTHONPATH": str(REPOSITORY)},
                           check=False)
    assert child.returncode == 0, child.stderr[-3000:]
    results = json.loads(child.stdout.strip().splitlines()[-1])
    assert results["default"]["replicas"] == 1 and results["mirrored"]["replicas"] == 2
    # The same global batch split over two replicas: the same model up to float summation order.
    assert abs(results["mirrored"]["dev"] - results["default"]["dev"]) <= 2.0, results
    assert results["default"]["dev"] > 50, results
