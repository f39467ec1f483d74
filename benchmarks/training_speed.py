"""Training speed and memory: every figure of the speed targets, one JSON line each.

    .venv/bin/python benchmarks/training_speed.py --data corpora/restaurant \
        [--task6 ../dialog-babi-task6] [--only epoch,end_to_end,template,table2,make_run]

Each measure runs the project's own command in a child process (so its wall time includes the start-up and its
peak RSS, summed over the process and the workers it starts, is its own):

- ``epoch``: seconds per epoch of ``dialog train`` with the shared defaults (task 5 with and without match
  type; task 6 with match type when ``--task6`` is given): training, dev evaluation, and their sum; the first
  epoch (which traces the graphs) apart from the steady ones.
- ``table2_steps``: seconds per epoch of Table 2's MemN2N recipe on task 5 with match type (unseen words zero, a
  gradient row per word occurrence, dev and the OOV dev set scored after each epoch), at each of its two steps:
  the shared one (Adam 0.005, batches of 128) and ``OOV_DEV_STEP`` (0.001, batches of 32).
- ``end_to_end``: ``dialog train --task 5 --match-type --epochs 8`` from the raw files to a saved model, and its
  dev per-response accuracy against the paper's 93.4.
- ``template``: ``dialog benchmark`` of the template MemN2N on tasks 3 and 5.
- ``table2``: ``dialog benchmark`` of every default method on tasks 1-5 with OOV (the longest measure).
- ``make_run``: what ``make run`` does after the install (validate, stats, the quick pipeline).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import click
import psutil

REPOSITORY = Path(__file__).resolve().parent.parent
DIALOG = [sys.executable, "-m", "pipeline.cli"]
MEASURES = ("epoch", "table2_steps", "end_to_end", "template", "table2", "make_run")
# How often run() samples the memory of a measured command's process tree.
TREE_SAMPLE_SECONDS = 0.5
# Table 2's MemN2N rows (models.babi.methods._memn2n_recipe), as `dialog train` flags.
TABLE2_RECIPE = ["--only-learned-words", "--per-occurrence-gradient", "--select-on-oov-dev"]


def table2_steps() -> dict[str, list[str]]:
    """The two steps of Table 2's MemN2N rows as `dialog train` flags: the shared one is `dialog train`'s default;
    the other is read from the presets of this checkout, the code the children run (imported here: TensorFlow comes
    with them, and only this measure needs it)."""
    sys.path.insert(0, str(REPOSITORY))
    from models.babi.presets import OOV_DEV_STEP

    return {"shared": [], "oov_dev_step": [f"--{key.replace('_', '-')}={value}" for key, value in OOV_DEV_STEP.items()]}


def tree_rss(pid: int) -> int:
    """Bytes resident in a process and all its descendants now (0 once it is gone)."""
    try:
        process = psutil.Process(pid)
        members = [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for member in members:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            total += member.memory_info().rss
    return total


def run(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (GB) and stdout of a child process; its stderr is kept only when it fails.

    The peak is the largest sum over the child and its descendants, sampled every
    :data:`TREE_SAMPLE_SECONDS` (``dialog benchmark --jobs`` trains in worker processes, and the kernel's peak
    of the largest process alone understates such a run)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, cwd=REPOSITORY,
                                 env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
        peak, done = [0], threading.Event()

        def sample() -> None:
            while not done.wait(TREE_SAMPLE_SECONDS):
                peak[0] = max(peak[0], tree_rss(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        done.set()
        sampler.join()
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if child.returncode:
            raise click.ClickException(f"{' '.join(command)} failed ({child.returncode}):\n"
                                       f"{err.read().decode(errors='replace')[-3000:]}")
        # ru_maxrss (KB on Linux): the largest single process, a floor when the tree was not caught at its peak
        return wall, max(usage.ru_maxrss * 1024, peak[0]) / 1024 ** 3, out.read().decode()


def last_json(out: str) -> dict:
    """The JSON line every `dialog` command prints last."""
    return json.loads(out.strip().splitlines()[-1])


def emit(record: dict) -> None:
    click.echo(json.dumps(record), nl=True)
    sys.stdout.flush()


def epoch_seconds(data: Path, task: int, match_type: bool, epochs: int, extra: list[str] | None = None,
                  measure: str = "epoch") -> dict:
    with tempfile.TemporaryDirectory() as work:
        wall, rss, out = run([*DIALOG, "train", "--data", str(data), "--task", str(task), "--epochs", str(epochs),
                              "--match-type" if match_type else "--no-match-type", "--out", f"{work}/model",
                              "--per-epoch", *(extra or [])])
    summary = last_json(out)
    history = summary["history"]
    steady = history[1:] or history
    mean = lambda key: round(sum(e[key] for e in steady) / len(steady), 2)  # noqa: E731
    return {"measure": measure, "task": task, "match_type": match_type, "epochs": len(history),
            "learning_rate": summary["config"]["learning_rate"],
            "train_examples": summary["train_examples"], "dev_examples": summary["dev_examples"],
            "memory_size": summary["memory_size"], "batch_size": summary["config"]["batch_size"],
            "seconds_per_epoch": round(mean("seconds") + mean("eval_seconds"), 2),
            "train_seconds": mean("seconds"), "dev_eval_seconds": mean("eval_seconds"),
            "first_epoch_seconds": round(history[0]["seconds"] + history[0]["eval_seconds"], 2),
            "dev_per_response": [round(e["dev_per_response_accuracy"], 2) for e in history],
            "wall_seconds": round(wall, 1), "peak_rss_gb": round(rss, 2)}


def end_to_end(data: Path, target: float, epochs: int) -> dict:
    with tempfile.TemporaryDirectory() as work:
        wall, rss, out = run([*DIALOG, "train", "--data", str(data), "--task", "5", "--match-type",
                              "--epochs", str(epochs), "--out", f"{work}/model"])
        exported = (Path(work) / "model" / "saved_model.pb").exists()
    summary = last_json(out)
    return {"measure": "end_to_end", "task": 5, "wall_seconds": round(wall, 1), "peak_rss_gb": round(rss, 2),
            "exported": exported, "dev_per_response": summary["dev_per_response_accuracy"], "target": target,
            "reached": summary["dev_per_response_accuracy"] >= target, "best_epoch": summary["best_epoch"],
            "epochs": summary["config"]["epochs"]}


def table(data: Path, measure: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as work:
        wall, rss, _ = run([*DIALOG, "benchmark", "--data", str(data), "--out", f"{work}/table.md", *extra])
        with open(f"{work}/table.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
    return {"measure": measure, "wall_seconds": round(wall, 1), "peak_rss_gb": round(rss, 2), "rows": rows}


def make_run(data: Path) -> dict:
    steps, peak = {}, 0.0
    with tempfile.TemporaryDirectory() as work:
        for name, command in (("validate", ["validate", str(data)]), ("stats", ["stats", str(data)]),
                              ("pipeline", ["pipeline", "--quick", "--data", str(data), "--root", work])):
            wall, rss, out = run([*DIALOG, *command])
            steps[name], peak = round(wall, 1), max(peak, rss)
    line = last_json(out)
    def per_response(slice_name: str) -> dict[str, float | None]:
        return {name: model["slices"].get(slice_name, {}).get("per_response_accuracy")
                for name, model in line["models"].items()}

    # "overall" covers the splits each model's Evaluator read (the quick profile: dev alone for the paper's
    # models), so dev is given apart: the one figure every model has.
    return {"measure": "make_run", "wall_seconds": round(sum(steps.values()), 1), "steps": steps,
            "peak_rss_gb": round(peak, 2), "overall_per_response": per_response("overall"),
            "dev_per_response": per_response("split=dev"),
            "evaluated_splits": {name: model.get("evaluated_splits") for name, model in line["models"].items()},
            "component_seconds": line["component_seconds"]}


@click.command()
@click.option("--data", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A generated restaurant corpus (tasks 1-5 with OOV).")
@click.option("--task6", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A task-6 (DSTC2) corpus for its seconds per epoch; skipped when not given.")
@click.option("--only", default=",".join(MEASURES), show_default=True, help="Comma-separated measures.")
@click.option("--epochs", default=3, show_default=True, help="Epochs of the seconds-per-epoch runs.")
@click.option("--target", default=93.4, show_default=True, help="Dev per-response accuracy of end_to_end (%).")
@click.option("--end-to-end-epochs", default=8, show_default=True, help="Epochs of the end_to_end run.")
def main(data: Path, task6: Path | None, only: str, epochs: int, target: float, end_to_end_epochs: int) -> None:
    chosen = [m.strip() for m in only.split(",") if m.strip()]
    unknown = set(chosen) - set(MEASURES)
    if unknown:
        raise click.BadParameter(f"unknown measures {sorted(unknown)}; choose from {', '.join(MEASURES)}")
    data, task6 = data.resolve(), task6.resolve() if task6 else None
    if "epoch" in chosen:
        emit(epoch_seconds(data, 5, True, epochs))
        emit(epoch_seconds(data, 5, False, epochs))
        if task6 is not None:
            task = int(re.search(r"task(\d)", next(task6.glob("*-trn.txt")).name).group(1))
            emit(epoch_seconds(task6, task, True, epochs))
    if "table2_steps" in chosen:
        for name, step in table2_steps().items():
            emit({**epoch_seconds(data, 5, True, epochs, TABLE2_RECIPE + step, "table2_steps"), "step": name})
    if "end_to_end" in chosen:
        emit(end_to_end(data, target, end_to_end_epochs))
    if "template" in chosen:
        emit(table(data, "template", ["--tasks", "3,5", "--methods", "template_memn2n"]))
    if "table2" in chosen:
        emit(table(data, "table2", []))
    if "make_run" in chosen:
        emit(make_run(data))


if __name__ == "__main__":
    main()
