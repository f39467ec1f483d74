"""MMN's selector on the banking development sets only: each kind of selector (``models.banking.networks``'
:data:`SELECTORS`: the paper's MemN2N, ours over words) trained on the openings of ``trn`` and scored on those of
``dev`` and of ``dev-OOP``, written with the development templates (out of template for training), one JSON line
per corpus and selector. No test file is read: this is what the choice of MMN's default selector was made on.

    .venv/bin/python benchmarks/mmn_selector.py --data corpora/banking [--data ANOTHER_SEED]...

A line gives the routed shares (percent of the openings sent to their own intent's network), the seconds the
selector took to train (the MemN2N's two learning rates included) and the misrouted openings, most frequent first;
or ``diverged`` when the MemN2N's training diverged at every learning rate (MMN stops with that error).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from pathlib import Path

import click

from data.banking.labels import DEV_CHALLENGES
from data.layout import BANKING_TASK, discover
from models.banking.labelled import dialog_intents, read_task_labels
from models.banking.networks import SELECTORS, paper_config, selector_examples, train_selector
from models.examples import TaskData
from models.methods import best_answers
from models.metrics import percent
from models.training import TrainingDiverged

SHOWN_ERRORS = 5


@click.command()
@click.option("--data", "corpora", multiple=True, required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path), help="A banking corpus (repeatable).")
@click.option("--selectors", default=",".join(SELECTORS), show_default=True)
def main(corpora: tuple[Path, ...], selectors: str) -> None:
    for corpus in corpora:
        files = discover(corpus)[BANKING_TASK]
        splits = ("trn", "dev", DEV_CHALLENGES)
        task = TaskData.load(files, splits)
        intents = dialog_intents(task, read_task_labels(files), splits)
        openings = {split: selector_examples(task.split(split), intents) for split in splits}
        for kind in selectors.split(","):
            with tempfile.TemporaryDirectory() as work:
                started = time.perf_counter()
                line: dict = {"measure": "mmn_selector", "corpus": str(corpus), "selector": kind}
                try:
                    selector, summary = train_selector(kind, openings["trn"], openings["dev"], paper_config(),
                                                       Path(work))
                except TrainingDiverged as error:  # the MemN2N at every learning rate: MMN would stop here
                    click.echo(json.dumps({**line, "diverged": str(error)}))
                    continue
                line["train_seconds"] = round(time.perf_counter() - started, 1)
                errors: Counter = Counter()
                for split in splits[1:]:
                    chosen = best_answers(selector, openings[split])
                    right = [got == e.answer for got, e in zip(chosen, openings[split], strict=True)]
                    line[f"{split}_routed"] = round(percent(right), 2)
                    errors.update((e.answer.rsplit(" ", 1)[1], got.rsplit(" ", 1)[1], e.query)
                                  for got, e, ok in zip(chosen, openings[split], right, strict=True) if not ok)
                if kind == "memn2n":
                    line["learning_rate"] = summary["config"]["learning_rate"]
                line["misrouted"] = [list(error) + [count] for error, count in errors.most_common(SHOWN_ERRORS)]
            click.echo(json.dumps(line))


if __name__ == "__main__":
    main()
