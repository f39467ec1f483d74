"""The state ranker on the banking development sets only: each configuration trained on ``trn`` (best epoch on
``dev``), then scored on ``dev`` (non-OOP) and each OOP case of ``dev-OOP`` (the development challenge sets), one
JSON line per configuration. No test file is read: this is what the state ranker's design choices and its
ablations are made and reported on.

    .venv/bin/python benchmarks/state_ranker_dev.py --data corpora/banking [--config '{"removed": ["act_term"]}']...

``--config`` is a JSON object of ``StateConfig`` fields (repeatable; default: the defaults alone).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import click

from data.banking.labels import CHALLENGES, DEV_CHALLENGES, MULTIPLE_CHALLENGES
from data.layout import BANKING_TASK, discover
from models.banking.labelled import labelled_examples, read_task_labels
from models.banking.reproduce import counted, score
from models.banking.state_ranker import StateConfig, train_state_ranker
from models.examples import TaskData
from models.methods import best_answers
from models.serving.ranker import SavedModelRanker


@click.command()
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option("--config", "configs", multiple=True, default=("{}",), show_default=True)
def main(data: Path, configs: tuple[str, ...]) -> None:
    files = discover(data)[BANKING_TASK]
    task = TaskData.load(files, splits=["trn", "dev", DEV_CHALLENGES])
    labels = read_task_labels(files)
    development = [e for split in ("dev", DEV_CHALLENGES) for e in labelled_examples(task, split, labels) if counted(e)]
    for text in configs:
        overrides = json.loads(text)
        config = StateConfig(**overrides)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as work:
            summary = train_state_ranker(task, Path(work) / "model", config)
            answers = best_answers(SavedModelRanker(Path(work) / "model"), [e.example for e in development])
        table8, table9, _ = score({"Ours": answers}, development)
        print(json.dumps({"config": overrides, "seconds": round(time.perf_counter() - started, 1),
                          "train_seconds": summary["train_seconds"], "best_epoch": summary["best_epoch"],
                          **{case: table8.get((case, "dev", "Ours")) for case in ("none", *CHALLENGES, "average")},
                          **{f"{case}-twice": table9.get((case, "dev", "Ours")) for case in MULTIPLE_CHALLENGES}}),
              flush=True)


if __name__ == "__main__":
    main()
