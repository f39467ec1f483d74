"""Training on several workers (models/distribute.py, the DialogTrainer's run_fn): two worker processes on
localhost, each told its place by TF_CONFIG as Vertex AI tells its replicas, train the model one process trains;
only the chief writes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate
from models.distribute import Worker, localhost_cluster, scratch_dir, worker_of

REPOSITORY = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("multi_worker_run.py")
EPOCHS = 4
SUMMARY = Path("model_run") / "training_summary.json"


def start(tmp_path: Path, name: str, artifacts: Path, tf_config: dict | None = None) -> subprocess.Popen:
    """A child running the Trainer's executor as ``name``; its temporary directory and logs are its own."""
    (tmp_path / name).mkdir()
    env = {"PYTHONPATH": str(REPOSITORY), "TMPDIR": str(tmp_path / name)}
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
    with open(tmp_path / f"{name}.log", "w") as log:
        return subprocess.Popen([sys.executable, str(CHILD), str(tmp_path / "corpus"),
                                 str(tmp_path / name / "examples"), str(artifacts), str(EPOCHS)],
                                stdout=log, stderr=subprocess.STDOUT, cwd=REPOSITORY, env=env)


def test_two_workers_train_the_single_process_model_and_only_the_chief_writes_it(tmp_path: Path) -> None:
    generate(GenerationPlan(seed=0, dialogs_per_split=30, tasks=(1,)), tmp_path / "corpus", runner="local")
    chief, worker = localhost_cluster(2)  # as Vertex AI names its worker pools 0 and 1
    shared, single = tmp_path / "job", tmp_path / "single"  # the workers of one job share its artifacts
    children = {
        "chief": start(tmp_path, "chief", shared, chief),
        "worker": start(tmp_path, "worker", shared, worker),
        "single": start(tmp_path, "single", single),
    }
    try:
        for name, child in children.items():
            assert child.wait(timeout=240) == 0, f"{name}: {(tmp_path / f'{name}.log').read_text()[-3000:]}"
    finally:
        for child in children.values():  # a worker whose peer died waits for it forever
            if child.poll() is None:
                child.kill()
    trained = {name: json.loads((root / SUMMARY).read_text()) for name, root in (("job", shared), ("single", single))}
    assert trained["job"]["replicas"] == 2 and trained["single"]["replicas"] == 1
    # The same global batches, each split over the two workers: the same model up to float summation order.
    accuracy = {name: summary["dev_per_response_accuracy"] for name, summary in trained.items()}
    print(json.dumps({"dev_per_response_accuracy": accuracy}))  # pytest -s shows the measure (docs/pipeline.md)
    assert abs(accuracy["job"] - accuracy["single"]) <= 1.0, accuracy
    assert accuracy["single"] > 50, accuracy
    # One model, the chief's, where the Trainer's artifacts are; the worker's scratch copy is gone.
    assert [path.relative_to(shared) for path in shared.rglob("saved_model.pb")] == [
        Path("model/Format-Serving/saved_model.pb")]
    assert sorted(path.name for path in shared.iterdir()) == ["model", "model_run"]
    for name in ("chief", "worker"):
        assert not list((tmp_path / name).glob("dialog-*")), name


@pytest.mark.parametrize(("tf_config", "expected", "chief"), [
    (None, Worker(), True),
    ("", Worker(), True),
    ('{"cluster": {"chief": ["a:1"]}, "task": {"type": "chief", "index": 0}}', Worker(), True),
    ('{"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"]}, "task": {"type": "chief", "index": 0}}',
     Worker(workers=3), True),
    ('{"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"]}, "task": {"type": "worker", "index": 0}}',
     Worker(workers=3, task_type="worker"), False),
    # Without a chief, worker 0 writes.
    ('{"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}}',
     Worker(workers=2, task_type="worker", has_chief=False), True),
    ('{"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}',
     Worker(workers=2, task_type="worker", task_index=1, has_chief=False), False),
    # AI Platform's older name of the chief; an evaluator is no worker.
    ('{"cluster": {"master": ["a:1"], "worker": ["b:1"], "evaluator": ["c:1"]}, "task": {"type": "master"}}',
     Worker(workers=2, task_type="master"), True),
])
def test_which_worker_writes(tf_config: str | None, expected: Worker, chief: bool) -> None:
    worker = worker_of(tf_config)
    assert worker == expected
    assert worker.is_chief is chief
    assert worker.several is (expected.workers > 1)


def test_a_task_that_does_not_train_is_refused() -> None:
    with pytest.raises(ValueError, match="'ps' does not train"):
        worker_of('{"cluster": {"worker": ["a:1"], "ps": ["b:1"]}, "task": {"type": "ps", "index": 0}}')


def test_only_a_non_chief_gets_a_scratch_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert scratch_dir(Worker()) is None
    scratch = scratch_dir(Worker(workers=2, task_type="worker", task_index=1, has_chief=False))
    assert scratch is not None and Path(scratch).is_dir() and Path(scratch).parent == tmp_path
