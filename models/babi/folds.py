"""Model selection that does not spend dev: k folds of the training dialogs, grouped by dialog.

On task 6 (DSTC2) dev overstates the held-back test, partly because every variant and epoch is chosen on
dev. Here each method is run ``k`` times: run ``r`` holds out fold ``r`` for the report, chooses its
variant or epoch on fold ``r + 1`` (its "dev"), and trains on the other ``k - 2`` folds. The mean over the held-out
folds, with its spread, is the estimate. A final run chooses on fold 0, trains on the rest of ``trn``, and is the
one model reported on the real dev (and test, when present): dev is used once, for the report, and never to
choose.

The fold runs train on ``(k - 2) / k`` of ``trn`` (the final run on ``(k - 1) / k``), so with few folds the estimate
leans pessimistic; ``k`` trades that against time.

Random folds share the training bots' habits, and task 6's held-back test was made by a dialog manager that trained
none of its dialogs (DSTC2's test set is the third system's). :func:`bot_runs` holds out a way of speaking instead:
the training dialogs fall into :data:`NEW_BOT_STYLES` wording styles of the bot (:func:`bot_styles`), and each run is
reported on one style, trained and chosen on the others.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from data.corpus import is_api_call
from models.babi.template.lexicon import EntityLexicon
from models.examples import TaskData

DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class FoldRun:
    """One run: ``task`` has ``trn`` (to train on) and ``dev`` (to choose on), and, for a fold run, ``tst``: the
    held-out fold it is reported on. ``name``: "fold r/k" or "final"."""

    name: str
    task: TaskData


def fold_runs(task: TaskData, folds: int = DEFAULT_FOLDS, seed: int = 0) -> list[FoldRun]:
    """The ``folds`` fold runs, then the final run (see the module docstring); dialogs are dealt to folds at
    random (``seed``), each dialog whole to one fold."""
    dialogs = task.dialogs["trn"]
    if folds < 3:
        raise ValueError(f"{folds} folds: at least 3 are needed (one to report, one to choose on, one to train)")
    if len(dialogs) < folds:
        raise ValueError(f"{task.files.splits['trn']}: {len(dialogs)} dialogs, fewer than the {folds} folds")
    parts = np.array_split(np.random.default_rng(seed).permutation(len(dialogs)), folds)
    fold = [[dialogs[i] for i in sorted(part)] for part in parts]

    def rest(*left_out: int) -> list:
        return [d for f in range(folds) if f not in left_out for d in fold[f]]

    runs = [FoldRun(f"fold {r + 1}/{folds}", task.with_dialogs(
        {"trn": rest(r, (r + 1) % folds), "dev": fold[(r + 1) % folds], "tst": fold[r]})) for r in range(folds)]
    return [*runs, FoldRun("final", task.with_dialogs({"trn": rest(0), "dev": fold[0]}))]


# bot_styles: a template is a candidate style seed when at least this share of the dialogs use it (and not nearly all);
# a marker of a style when used this many times more often in its dialogs than in any other's, by this many dialogs.
STYLE_SEED_SHARE, STYLE_MARKER_RATIO, STYLE_MARKER_DIALOGS = 0.05, 4.0, 20
# The (new bot) row holds out each of this many wording styles in turn.
NEW_BOT_STYLES = 3


def bot_styles(task: TaskData, styles: int = NEW_BOT_STYLES) -> list[int]:
    """Each training dialog's bot wording style, 1 to ``styles`` (0: it shows none), learned from the bot's templates.

    The seeds are the ``styles`` frequent templates least often used in one dialog (the smallest largest lift of a
    pair; between equals, those used in the most dialogs): on the public task 6, wordings of an offer that never
    meet. Each dialog using one seed and no other takes its style; then, twice, the templates used at least
    :data:`STYLE_MARKER_RATIO` times more often in one style's dialogs than in any other's become its markers, and
    an undecided dialog takes the style most of its markers belong to."""
    if styles < 2:
        raise ValueError(f"{styles} wording styles: at least 2 are needed")
    lexicon = EntityLexicon.learn(task.facts, [e.answer for e in task.split("trn")])
    used = [{lexicon.delexicalise(t.bot) for t in d.turns if not is_api_call(t.bot)} for d in task.dialogs["trn"]]
    count = Counter(t for templates in used for t in templates)
    total = len(used)
    frequent = sorted(t for t, n in count.items() if STYLE_SEED_SHARE * total <= n <= (1 - STYLE_SEED_SHARE) * total)
    lift = {(a, b): sum(a in u and b in u for u in used) * total / (count[a] * count[b])
            for a, b in itertools.combinations(frequent, 2)}
    seeds = min(itertools.combinations(frequent, styles), default=None,
                key=lambda group: (max(lift[pair] for pair in itertools.combinations(group, 2)),
                                   -sum(count[t] for t in group), group))
    if seeds is None:
        raise ValueError(f"{task.files.splits['trn'] if task.files else 'trn'}: too few frequent bot templates to "
                         f"tell {styles} wording styles apart")
    labels = [next(iter(hit)) + 1 if len(hit := {i for i, seed in enumerate(seeds) if seed in u}) == 1 else 0
              for u in used]
    names = range(1, styles + 1)
    for _ in range(2):
        by_style = {s: Counter(t for u, style in zip(used, labels, strict=True) if style == s for t in u)
                    for s in names}
        size = {s: labels.count(s) for s in names}
        markers = {}
        for template in (t for t in count if count[t] >= STYLE_MARKER_DIALOGS):
            share = sorted(((by_style[s][template] + 1) / (size[s] + 2), s) for s in names)
            if share[-1][0] >= STYLE_MARKER_RATIO * share[-2][0]:
                markers[template] = share[-1][1]
        votes = [Counter(markers[t] for t in u if t in markers).most_common() for u in used]
        labels = [label or (v[0][0] if v and (len(v) == 1 or v[0][1] > v[1][1]) else 0)
                  for label, v in zip(labels, votes, strict=True)]
    return labels


def bot_runs(task: TaskData, seed: int = 0, styles: int = NEW_BOT_STYLES) -> list[FoldRun]:
    """One run per wording style (:func:`bot_styles`): reported on that style's dialogs, trained on the others
    (the other styles' and the undecided ones) but a fifth of them, chosen on that fifth (at random, ``seed``)."""
    dialogs, labels = task.dialogs["trn"], bot_styles(task, styles)
    sizes = [labels.count(s) for s in range(1, styles + 1)]
    if min(sizes) < DEFAULT_FOLDS:
        raise ValueError(f"bot wording styles of {', '.join(map(str, sizes))} dialogs: too few to hold out")
    runs = []
    for held in range(1, styles + 1):
        others = [d for d, style in zip(dialogs, labels, strict=True) if style != held]
        order = np.random.default_rng(seed).permutation(len(others))
        choose = set(order[:max(1, len(others) // DEFAULT_FOLDS)].tolist())
        runs.append(FoldRun(f"new bot {held}/{styles}", task.with_dialogs({
            "trn": [d for i, d in enumerate(others) if i not in choose],
            "dev": [d for i, d in enumerate(others) if i in choose],
            "tst": [d for d, style in zip(dialogs, labels, strict=True) if style == held]})))
    return runs


def mean_and_spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value), rounded to 2 decimals."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return round(statistics.fmean(values), 2), round(spread, 2)
