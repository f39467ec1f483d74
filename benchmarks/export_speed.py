"""Seconds to export a trained model as a SavedModel, and the size written: one JSON line per model.

    .venv/bin/python benchmarks/export_speed.py [--repeats 3]

Trains MemN2N (match type) and the template ranker on a small generated task-5 corpus (one epoch: what is timed is
the export, not the training), then calls ``models.serving.export.export`` ``--repeats`` times into fresh
directories, each time with a new serving module (as every fit makes one). Every test and pipeline run that trains
a model pays this once per model.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import click


def _size(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


@click.command()
@click.option("--repeats", default=3, show_default=True, type=click.IntRange(min=1))
def main(repeats: int) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from data.babi.generation import GenerationPlan, generate
    from data.layout import discover
    from models.babi.template.config import TemplateConfig
    from models.babi.template.ranker import TemplateRanker
    from models.examples import TaskData
    from models.features import build_spec
    from models.serving.export import DialogServingModule, export
    from models.training import fit, memory_size_for, train_config

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        generate(GenerationPlan(seed=0, dialogs_per_split=20, tasks=(5,)), work / "data", runner="local")
        task = TaskData.load(discover(work / "data")[5])
        config = train_config("memn2n", match_type=True, epochs=1)
        trn, dev = task.split("trn"), task.split("dev")
        spec = build_spec(task, memory_size=memory_size_for(config, trn + dev))
        model, _ = fit(spec, trn, dev, config)
        template, _ = TemplateRanker.fit(task, TemplateConfig(hops=1, embedding_dim=16, epochs=1),
                                         work / "template", fill_epochs=1)
        # A new module each time: a module's second export reuses what its first traced.
        modules = {"memn2n_match": lambda: DialogServingModule(spec, model),
                   "template": lambda: replace(template).module}
        for name, module in modules.items():
            for repeat in range(repeats):
                out = work / f"{name}-{repeat}"
                started = time.perf_counter()
                export(module(), out)
                print(json.dumps({"measure": "export", "model": name, "repeat": repeat,
                                  "seconds": round(time.perf_counter() - started, 3), "bytes": _size(out)}),
                      flush=True)


if __name__ == "__main__":
    main()
