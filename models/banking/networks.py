"""Single and multiple memory networks (section 4 of Majumdar et al.) on the banking self-play corpus.

* **SMN**: one MemN2N trained on the dialogs of every intent.
* **MMN**: one MemN2N per intent, trained on that intent's dialogs, and a selector that picks the intent network
  for a dialog. The selector is trained on the user's opening utterance, whose answer is replaced by a
  ``api_call memory_network <intent>`` action, as the paper appends a call-memory-network action there. The
  paper's selector is a seventh MemN2N (``selector="memn2n"``, its learning rate, 0.001 or 0.01, chosen on dev);
  ours by default (``selector="words"``) is a logistic regression over the opening's words (:class:`WordSelector`):
  the MemN2N learned the training templates' words with the intent's and sent openings worded otherwise to the
  intent whose template they resembled ("what is the balance on savings right now" to the limit, whose training
  template is "what is the limit on ... right now"), where the regression weighs the words that tell the intents
  apart (dev, in the development templates: ``benchmarks/mmn_selector.py``).

Both use the paper's settings (learning rate 0.001, batch 32, up to 20 epochs, embedding 128, memory 40,
3 hops), train on ``trn`` and keep their best epoch on ``dev`` (stopping after 3 epochs without progress). Both
rank plain turn examples: MMN routes each dialog itself, so it ranks what any other method ranks. They are
registered as methods in ``models.banking.methods``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from data.atomic import write_text_atomic
from data.banking.domain import INTENTS
from models.examples import TurnExample
from models.features import FeatureSpec, spec_from_sentences
from models.methods import Ranker, best_answers
from models.metrics import accuracy_report
from models.serving.ranker import SavedModelRanker
from models.training import MemN2NConfig, TrainConfig, TrainingDiverged, fit_and_export

PAPER_EPOCHS = 20  # the paper's; more is never run
SELECTOR_ACTION = "api_call memory_network {intent}"
SELECTOR_LEARNING_RATES = (0.001, 0.01)
SELECTORS = ("words", "memn2n")  # ours (the default), the paper's
# Turn 0 answers the opening silence with the greeting; the user says what they want at turn 1.
OPENING_TURN = 1


def paper_config(epochs: int = PAPER_EPOCHS, **overrides: object) -> MemN2NConfig:
    return replace(MemN2NConfig(hops=3, embedding_dim=128, learning_rate=0.001, batch_size=32, epochs=epochs,
                               max_memory=40), **overrides)


def opening(example: TurnExample) -> TurnExample | None:
    """The opening turn of ``example``'s dialog: the example itself at that turn, or rebuilt from a later turn,
    whose memory begins with the opening's memory, query and answer (no KB result comes before the first API
    call); None for the greeting, which comes before it."""
    if example.turn == OPENING_TURN:
        return example
    if example.turn < OPENING_TURN:
        return None
    start = 2 * OPENING_TURN  # a user and a bot utterance per earlier turn
    return replace(example, turn=OPENING_TURN, memory=example.memory[:start],
                   memory_speaker=example.memory_speaker[:start], query=example.memory[start],
                   answer=example.memory[start + 1])


def utterance_only(example: TurnExample) -> TurnExample:
    """The opening turn as the selector reads it: the user's utterance, without the greeting before it.

    The greeting is the same in every dialog, so it tells no intent apart; but its words ("how can i help you")
    share the embedding of the query's, and a selector that reads it learns a bias for those words: openings
    that use them ("can you help me transfer money") went to the wrong network (docs/results.md)."""
    return replace(example, memory=(), memory_speaker=())


def selector_examples(examples: Sequence[TurnExample], intents: Mapping[str, str]) -> list[TurnExample]:
    """The user's opening utterance of each dialog, answered by the call-memory-network action of its intent
    (``intents``: dialog id -> intent)."""
    return [replace(utterance_only(e), answer=SELECTOR_ACTION.format(intent=intents[e.dialog_id]))
            for e in examples if e.turn == OPENING_TURN]


class WordSelector:
    """MMN's selector as a logistic regression over the words of the opening utterance (each word present or not;
    scikit-learn's defaults: L2 with C = 1, no setting chosen): the actions ranked by probability."""

    def __init__(self, actions: Sequence[str]) -> None:
        self.actions = list(actions)
        self.words = CountVectorizer(token_pattern=r"\S+", binary=True)  # words as the corpus splits them
        self.model = LogisticRegression(max_iter=1000)

    def fit(self, examples: Sequence[TurnExample]) -> WordSelector:
        unknown = sorted({e.answer for e in examples} - set(self.actions))
        if unknown:
            raise ValueError(f"selector answers that are not actions: {unknown[:3]}")
        self.model.fit(self.words.fit_transform([e.query for e in examples]), [e.answer for e in examples])
        return self

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        if not examples:
            return []
        probabilities = self.model.predict_proba(self.words.transform([e.query for e in examples]))
        order = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
        return [[str(self.model.classes_[i]) for i in row] for row in order]

    def save(self, path: Path) -> None:
        """The fitted weights as JSON (words, actions, coefficients), for the record of what routed the dialogs."""
        write_text_atomic(path, json.dumps({
            "words": self.words.get_feature_names_out().tolist(), "actions": self.model.classes_.tolist(),
            "coefficients": self.model.coef_.round(6).tolist(), "intercepts": self.model.intercept_.round(6).tolist()}))


class MultipleMemoryNetwork:
    """Routes each dialog to the intent network the selector picks from the dialog's opening turn."""

    def __init__(self, selector: Ranker, networks: Mapping[str, Ranker]) -> None:
        self.selector = selector
        self.networks = dict(networks)

    def route(self, examples: Sequence[TurnExample]) -> dict[str, str]:
        """The intent the selector picks for each dialog of ``examples`` (by dialog id), from its opening turn
        (the turn itself when among ``examples``, else rebuilt from a later one)."""
        openings: dict[str, TurnExample] = {}
        for e in examples:
            first = opening(e)
            if first is not None and (e.turn == OPENING_TURN or e.dialog_id not in openings):
                openings[e.dialog_id] = utterance_only(first)
        chosen = best_answers(self.selector, list(openings.values()))
        return {dialog: action.rsplit(" ", 1)[1] for dialog, action in zip(openings, chosen, strict=True)}

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """Each example ranked by its dialog's network. A dialog seen only at its greeting has no opening to route
        by; every network answers the greeting alike, so the first intent's does."""
        routes = self.route(examples)
        groups: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(examples):
            groups[routes.get(e.dialog_id, INTENTS[0])].append(i)
        ranked: list[list[str]] = [[] for _ in examples]
        for intent, indices in groups.items():
            for i, row in zip(indices, self.networks[intent].rank([examples[i] for i in indices], k), strict=True):
                ranked[i] = row
        return ranked


def train_smn(spec: FeatureSpec, trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TrainConfig,
              out: Path, verbose: int = 0, log_dir: str | None = None, top_k: int = 10
              ) -> tuple[SavedModelRanker, dict]:
    """SMN exported to ``out``: the exported model and the training summary."""
    summary = fit_and_export(spec, trn, dev, config, out, verbose=verbose, log_dir=log_dir, top_k=top_k)
    return SavedModelRanker(out), summary


def train_mmn(spec: FeatureSpec, trn: Sequence[TurnExample], dev: Sequence[TurnExample], intents: Mapping[str, str],
              config: TrainConfig, out: Path, verbose: int = 0, log_dir: str | None = None, top_k: int = 10,
              selector: str = "words") -> tuple[MultipleMemoryNetwork, dict[str, dict]]:
    """MMN exported under ``out`` (a directory per network; ``intents``: each dialog's, by id): the networks and
    their summaries by intent, the selector's (``selector``: one of :data:`SELECTORS`) as ``selector``."""
    check_selector(selector)  # before the networks train
    summaries: dict[str, dict] = {}
    for intent in INTENTS:
        summaries[intent] = fit_and_export(spec, [e for e in trn if intents[e.dialog_id] == intent],
                                           [e for e in dev if intents[e.dialog_id] == intent], config, out / intent,
                                           verbose=verbose, top_k=top_k,
                                           log_dir=f"{log_dir}/{intent}" if log_dir else None)
    chosen, summaries["selector"] = train_selector(selector, selector_examples(trn, intents),
                                                   selector_examples(dev, intents), config, out, verbose, log_dir,
                                                   top_k, memory_size=spec.memory_size)
    return MultipleMemoryNetwork(chosen, _networks(out)), summaries


def train_selector(selector: str, trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TrainConfig,
                   out: Path, verbose: int = 0, log_dir: str | None = None, top_k: int = 10, memory_size: int = 40
                   ) -> tuple[Ranker, dict]:
    """MMN's selector (``selector``: one of :data:`SELECTORS`) fitted on the openings ``trn`` (and, for the
    MemN2N, its learning rate chosen on ``dev``), written under ``out``: the selector and its summary (its dev
    accuracy as ``dev_per_response_accuracy``)."""
    check_selector(selector)
    actions = [SELECTOR_ACTION.format(intent=intent) for intent in INTENTS]
    if selector == "words":
        words = WordSelector(actions).fit(trn)
        words.save(out / "selector-words.json")
        routed = accuracy_report(dev, best_answers(words, dev))["per_response_accuracy"]
        return words, {"selector": "words", "dev_per_response_accuracy": routed}
    selector_spec = spec_from_sentences(actions, [], {e.query for e in trn}, memory_size=memory_size)
    # The selector classifies one utterance, a task of its own: at the networks' learning rate it stalls early, well
    # below what a larger step reaches, so its learning rate is chosen on dev.
    # A rate whose training diverges is not a candidate (it happens now and then on these memory-less examples; the
    # note lists it); the other rate is chosen, and with neither the error stands.
    candidates, diverged = {}, []
    for rate in SELECTOR_LEARNING_RATES:
        name = f"selector-{rate}"
        try:
            candidates[name] = fit_and_export(selector_spec, trn, dev, replace(config, learning_rate=rate),
                                              out / name, verbose=verbose, top_k=top_k,
                                              log_dir=f"{log_dir}/{name}" if log_dir else None)
        except TrainingDiverged:
            if len(diverged) == len(SELECTOR_LEARNING_RATES) - 1:
                raise
            diverged.append(rate)
    best = max(candidates, key=lambda name: candidates[name]["dev_per_response_accuracy"])
    return SavedModelRanker(out / best), {"selector": "memn2n", **candidates[best], "diverged_learning_rates": diverged}


def check_selector(selector: str) -> None:
    if selector not in SELECTORS:
        raise ValueError(f"selector must be one of {SELECTORS}, not {selector!r}")


def _networks(out: Path) -> dict[str, SavedModelRanker]:
    return {intent: SavedModelRanker(out / intent) for intent in INTENTS}
