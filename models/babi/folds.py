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
the training dialogs fall into two wording styles of the bot (:func:`bot_styles`), and each run is reported on one
style, trained and chosen on the other.
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
# a marker of a style when used this many times more often in its dialogs than in the other's, by this many dialogs.
STYLE_SEED_SHARE, STYLE_MARKER_RATIO, STYLE_MARKER_DIALOGS = 0.05, 4.0, 20


def bot_styles(task: TaskData) -> list[int]:
    """Each training dialog's bot wording style, 1 or 2 (0: it shows neither), learned from the bot's templates.

    The two seeds are the pair of frequent templates least often used in one dialog (least lift: on the public
    task 6, two wordings of an offer or a no-match that never meet). Each dialog using one seed and not the other
    takes its style; then, twice, the templates used at least :data:`STYLE_MARKER_RATIO` times more often in one
    style's dialogs become its markers, and an undecided dialog takes the style most of its markers belong to."""
    lexicon = EntityLexicon.learn(task.facts, [e.answer for e in task.split("trn")])
    used = [{lexicon.delexicalise(t.bot) for t in d.turns if not is_api_call(t.bot)} for d in task.dialogs["trn"]]
    count = Counter(t for templates in used for t in templates)
    total = len(used)
    frequent = sorted(t for t, n in count.items() if STYLE_SEED_SHARE * total <= n <= (1 - STYLE_SEED_SHARE) * total)
    pairs = [(sum(a in u and b in u for u in used) * total / (count[a] * count[b]), a, b)
             for a, b in itertools.combinations(frequent, 2)]
    if not pairs:
        raise ValueError(f"{task.files.splits['trn'] if task.files else 'trn'}: too few frequent bot templates to "
                         "tell two wording styles apart")
    _, first, second = min(pairs)
    styles = [1 if first in u and second not in u else 2 if second in u and first not in u else 0 for u in used]
    for _ in range(2):
        by_style = {s: Counter(t for u, style in zip(used, styles, strict=True) if style == s for t in u)
                    for s in (1, 2)}
        size = {s: styles.count(s) for s in (1, 2)}
        share = {s: {t: (by_style[s][t] + 1) / (size[s] + 2) for t in count} for s in (1, 2)}
        markers = {t: 1 if share[1][t] > share[2][t] else 2 for t in count if count[t] >= STYLE_MARKER_DIALOGS
                   and max(share[1][t] / share[2][t], share[2][t] / share[1][t]) >= STYLE_MARKER_RATIO}
        votes = [Counter(markers[t] for t in u if t in markers) for u in used]
        styles = [style or (1 if v[1] > v[2] else 2 if v[2] > v[1] else 0) for style, v in zip(styles, votes,
                                                                                            strict=True)]
    return styles


def bot_runs(task: TaskData, seed: int = 0) -> list[FoldRun]:
    """Two runs, one per wording style (:func:`bot_styles`): reported on that style's dialogs, trained on the
    others (the other style's and the undecided ones) but a fifth of them, chosen on that fifth (at random,
    ``seed``)."""
    dialogs, styles = task.dialogs["trn"], bot_styles(task)
    if min(styles.count(1), styles.count(2)) < DEFAULT_FOLDS:
        raise ValueError(f"bot wording styles of {styles.count(1)} and {styles.count(2)} dialogs: too few to hold out")
    runs = []
    for held in (1, 2):
        others = [d for d, style in zip(dialogs, styles, strict=True) if style != held]
        order = np.random.default_rng(seed).permutation(len(others))
        choose = set(order[:max(1, len(others) // DEFAULT_FOLDS)].tolist())
        runs.append(FoldRun(f"new bot {held}/2", task.with_dialogs({
            "trn": [d for i, d in enumerate(others) if i not in choose],
            "dev": [d for i, d in enumerate(others) if i in choose],
            "tst": [d for d, style in zip(dialogs, styles, strict=True) if style == held]})))
    return runs


def mean_and_spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value), rounded to 2 decimals."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return round(statistics.fmean(values), 2), round(spread, 2)
