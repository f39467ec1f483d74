"""Single and multiple memory networks (section 4 of Majumdar et al.) on the banking self-play corpus.

* **SMN**: one MemN2N trained on the dialogs of every intent.
* **MMN**: one MemN2N per intent, trained on that intent's dialogs, and a seventh that picks the intent network
  for a dialog. The selector is trained on the user's opening turn, whose answer is replaced by a
  ``api_call memory_network <intent>`` action, as the paper appends a call-memory-network action there; its
  learning rate (0.001 or 0.01) is chosen on dev.

Both use the paper's settings (learning rate 0.001, batch 32, up to 20 epochs, embedding 128, memory 40,
3 hops), train on ``trn`` and keep their best epoch on ``dev`` (stopping after 3 epochs without progress).
Tables 8 and 9 are scored in ``models.banking.tables``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from data.banking.domain import INTENTS
from models.examples import TaskData, TurnExample
from models.methods import best_answers
from models.features import FeatureSpec, spec_from_sentences
from models.serving.ranker import SavedModelRanker
from models.training import TrainConfig, fit_and_export

SELECTOR_ACTION = "api_call memory_network {intent}"
SELECTOR_LEARNING_RATES = (0.001, 0.01)


def paper_config(epochs: int = 20, **overrides: object) -> TrainConfig:
    return replace(TrainConfig(hops=3, embedding_dim=128, learning_rate=0.001, batch_size=32, epochs=epochs,
                               max_memory=40), **overrides)


@dataclass(frozen=True)
class LabelledExample:
    example: TurnExample
    intent: str
    templates: str  # trn, dev, IT, OOT
    challenge: str
    multiple: bool
    is_challenge_turn: bool


def labelled_examples(task: TaskData, split: str, labels: Sequence[dict]) -> list[LabelledExample]:
    by_dialog = {label["dialog"]: label for label in labels if label["split"] == split}
    result = []
    for example in task.split(split):
        index = int(example.dialog_id.rsplit("/", 1)[1])
        label = by_dialog.get(index)
        if label is None:
            raise ValueError(f"{task.files.splits[split]}: dialog {index} has no line in the labels sidecar")
        result.append(LabelledExample(example, label["intent"], label["templates"], label["challenge"],
                                      bool(label.get("multiple")), example.turn in label.get("challenge_turns", [])))
    return result


def _selector_examples(examples: Sequence[LabelledExample]) -> list[TurnExample]:
    """The user's opening turn of each dialog, answered by the call-memory-network action."""
    return [replace(e.example, answer=SELECTOR_ACTION.format(intent=e.intent)) for e in examples if e.example.turn == 1]


class SingleMemoryNetwork:
    def __init__(self, directory: Path) -> None:
        self.ranker = SavedModelRanker(directory)

    def rank(self, examples: Sequence[LabelledExample], k: int = 10) -> list[list[str]]:
        return self.ranker.rank([e.example for e in examples], k)


class MultipleMemoryNetwork:
    """Routes each dialog to the intent network the selector picks from the dialog's opening turn."""

    def __init__(self, selector: Path, networks: dict[str, Path]) -> None:
        self.selector = SavedModelRanker(selector)
        self.networks = {intent: SavedModelRanker(path) for intent, path in networks.items()}

    def route(self, examples: Sequence[LabelledExample]) -> dict[str, str]:
        openings = [e.example for e in examples if e.example.turn == 1]
        chosen = best_answers(self.selector, openings)
        return {e.dialog_id: action.rsplit(" ", 1)[1] for e, action in zip(openings, chosen, strict=True)}

    def rank(self, examples: Sequence[LabelledExample], k: int = 10,
             routes: dict[str, str] | None = None) -> list[list[str]]:
        """Each example ranked by its dialog's network (``routes``: the selector's choices, if already made)."""
        routes = self.route(examples) if routes is None else routes
        groups: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(examples):
            groups[routes.get(e.example.dialog_id, INTENTS[0])].append(i)
        ranked: list[list[str]] = [[] for _ in examples]
        for intent, indices in groups.items():
            for i, row in zip(indices, self.networks[intent].rank([examples[i].example for i in indices], k),
                              strict=True):
                ranked[i] = row
        return ranked


def train_smn(spec: FeatureSpec, trn: Sequence[LabelledExample], dev: Sequence[LabelledExample], config: TrainConfig,
              out: Path) -> tuple[SingleMemoryNetwork, dict]:
    summary = fit_and_export(spec, [e.example for e in trn], [e.example for e in dev], config, out / "smn")
    return SingleMemoryNetwork(out / "smn"), summary


def train_mmn(spec: FeatureSpec, trn: Sequence[LabelledExample], dev: Sequence[LabelledExample], config: TrainConfig,
              out: Path) -> tuple[MultipleMemoryNetwork, dict]:
    summaries: dict[str, dict] = {}
    networks = {}
    for intent in INTENTS:
        trn_i = [e.example for e in trn if e.intent == intent]
        dev_i = [e.example for e in dev if e.intent == intent]
        networks[intent] = out / f"mmn-{intent}"
        summaries[intent] = fit_and_export(spec, trn_i, dev_i, config, networks[intent])
    selector_trn, selector_dev = _selector_examples(trn), _selector_examples(dev)
    actions = [SELECTOR_ACTION.format(intent=intent) for intent in INTENTS]
    sentences = {s for e in selector_trn for s in (*e.memory, e.query)}
    selector_spec = spec_from_sentences(actions, [], sentences, memory_size=spec.memory_size)
    # The selector classifies one utterance, a task of its own: its learning rate is chosen on dev (at 0.001 it
    # peaked after one epoch at 67.7% dev on our corpus, at 0.01 it reached 90.2%).
    candidates = {}
    for rate in SELECTOR_LEARNING_RATES:
        directory = out / f"mmn-selector-{rate}"
        candidates[directory] = fit_and_export(selector_spec, selector_trn, selector_dev,
                                               replace(config, learning_rate=rate), directory)
    best = max(candidates, key=lambda d: candidates[d]["dev_per_response_accuracy"])
    summaries["selector"] = candidates[best]
    return MultipleMemoryNetwork(best, networks), summaries
