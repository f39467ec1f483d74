"""Write the banking self-play corpus in the dialog-bAbI layout, with its labels in a sidecar file.

Files (task 7, name ``banking``): ``trn`` and ``dev`` (no out-of-pattern phenomenon; their own template thirds),
``dev-OOP`` (the development challenge sets: every OOP case, single and multiple, written with the development
templates, to choose on), ``tst`` (in-template tests: training and development templates) and ``tst-OOT``
(out-of-template tests: the third of the templates no training or development dialog uses). Each test file holds the
non-OOP dialogs and every OOP challenge set, single and multiple. The sidecar ``...-labels.jsonl`` gives, per
dialog of each file, its intent, template split, challenge and the bot turns that answer the phenomenon.

A dialog depends only on (seed, file, intent, challenge, index), so the same seed gives the same bytes.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from data import babi_format
from data.atomic import one_writer, staged_files, write_text_atomic
from data.banking.domain import INTENTS, sample_profile
from data.banking.labels import CHALLENGES, DEV_CHALLENGES, MULTIPLE_CHALLENGES, NONE, render_labels
from data.banking.readings import DEFAULT, Readings
from data.banking.selfplay import (
    API,
    APPLICABLE,
    MULTIPLE_INTENTS,
    SYSTEM,
    Action,
    Scenario,
    SelfPlayDialog,
    play,
)
from data.banking.templates import JOINERS, SYSTEM_UTTERANCES, template_thirds
from data.corpus import SILENCE, CandidateFile, Dialog, DialogFile
from data.layout import BANKING_TASK, dialog_file_name, task_candidates_name, task_labels_name

TEMPLATES_OF_FILE = {"trn": ("trn",), "dev": ("dev",), "tst": ("trn", "dev"), "tst-OOT": ("OOT",),
                     DEV_CHALLENGES: ("dev",)}
TEMPLATE_SPLIT_LABEL = {"trn": "trn", "dev": "dev", "tst": "IT", "tst-OOT": "OOT", DEV_CHALLENGES: "dev"}
# With ``BankingPlan.swapped_thirds``, the thirds of the files a model is trained and chosen on, swapped.
SWAPPED_FILES = {"trn": ("dev",), "dev": ("trn",), DEV_CHALLENGES: ("trn",)}
MAX_ATTEMPTS = 50


@dataclass(frozen=True)
class BankingPlan:
    seed: int = 0
    train_dialogs: int = 500  # per intent
    dev_dialogs: int = 100  # per intent
    test_dialogs: int = 200  # per intent and test case, as the paper
    dev_challenge_dialogs: int | None = None  # per intent and OOP case, in dev-OOP (None: as dev_dialogs)
    readings: Readings = field(default_factory=Readings)  # the paper's open details (data/banking/readings.py)
    # trn written with the development third of the templates, dev and dev-OOP with the training third (the tests as
    # ever): a second held-out set of wordings to choose a feature about wordings on, the test third never in it.
    swapped_thirds: bool = False


def _challenge_scenarios(count: int) -> list[tuple[Scenario, int]]:
    chosen = []
    for challenge in CHALLENGES:
        chosen += [(Scenario(intent, challenge), count) for intent in INTENTS if intent in APPLICABLE[challenge]]
    for challenge in MULTIPLE_CHALLENGES:
        chosen += [(Scenario(intent, challenge, True), count) for intent in MULTIPLE_INTENTS]
    return chosen


def scenarios(plan: BankingPlan, file: str) -> list[tuple[Scenario, int]]:
    """(scenario, count) of a file: training and development hold plain dialogs only, the development challenge
    sets every OOP case, the tests both."""
    if file == "trn":
        return [(Scenario(intent), plan.train_dialogs) for intent in INTENTS]
    if file == "dev":
        return [(Scenario(intent), plan.dev_dialogs) for intent in INTENTS]
    if file == DEV_CHALLENGES:
        return _challenge_scenarios(plan.dev_dialogs if plan.dev_challenge_dialogs is None
                                    else plan.dev_challenge_dialogs)
    return [(Scenario(intent), plan.test_dialogs) for intent in INTENTS] + _challenge_scenarios(plan.test_dialogs)


def plan_of(labels: Sequence[dict]) -> BankingPlan:
    """The plan a corpus was generated with, read back from its labels: the seed each line records (0 for a corpus
    written before it did), the readings other than the defaults they record, and the dialogs per intent of each
    file (per intent and case for the tests and the development challenge sets)."""
    first = INTENTS[0]

    def count(split: str, challenge: str = NONE) -> int:
        return sum(label["split"] == split and label["intent"] == first and label["challenge"] == challenge
                   and not label.get("multiple") for label in labels)

    seeds = {label.get("seed", 0) for label in labels}
    if len(seeds) != 1:
        raise ValueError(f"the labels name {len(seeds)} seeds ({sorted(seeds)[:3]}...): not one generated corpus")
    swapped = {bool(label.get("swapped_thirds")) for label in labels}
    if len(swapped) != 1:
        raise ValueError("the labels name swapped template thirds and the usual ones: not one generated corpus")
    recorded = {json.dumps(label.get("readings", {}), sort_keys=True) for label in labels}
    readings = {json.dumps(Readings(**json.loads(text)).changed(), sort_keys=True) for text in recorded}
    if len(readings) != 1:
        raise ValueError(f"the labels name {len(readings)} sets of readings: not one generated corpus")
    return BankingPlan(seed=seeds.pop(), train_dialogs=count("trn"), dev_dialogs=count("dev"),
                       test_dialogs=count("tst"), dev_challenge_dialogs=count(DEV_CHALLENGES, CHALLENGES[0]),
                       readings=Readings(**json.loads(readings.pop())), swapped_thirds=swapped.pop())


def self_play(seed: int, file: str, scenario: Scenario, index: int, readings: Readings = DEFAULT) -> SelfPlayDialog:
    """One dialog of a scenario; a challenge scenario is played again until its phenomenon happens."""
    for attempt in range(MAX_ATTEMPTS):
        key = f"{seed}:{file}:{scenario.intent}:{scenario.challenge}:{scenario.multiple}:{index}:{attempt}"
        rng = random.Random(key)
        dialog = play(scenario, sample_profile(rng), rng, readings=readings)
        if dialog.complete:
            return dialog
    raise RuntimeError(f"no dialog with the {scenario} phenomenon in {MAX_ATTEMPTS} attempts")


@functools.cache
def _file_templates(file: str, swapped: bool = False) -> dict[str, list[str]]:
    """form -> the templates a file's dialogs are realised with (IT tests: training and development thirds;
    ``swapped``: :data:`SWAPPED_FILES`)."""
    thirds = SWAPPED_FILES.get(file, TEMPLATES_OF_FILE[file]) if swapped else TEMPLATES_OF_FILE[file]
    return {form: [t for split in thirds for t in by_split[split]] for form, by_split in template_thirds().items()}


class Realiser:
    """Actions to text: user actions through the file's templates, system actions through fixed utterances."""

    def __init__(self, file: str, rng: random.Random, swapped: bool = False) -> None:
        self.templates = _file_templates(file, swapped)
        self.rng = rng

    def _fill(self, form: str, slots: dict[str, str]) -> str:
        return self.rng.choice(self.templates[form]).format(**slots)

    def user(self, action: Action) -> str:
        slots = dict(action.slots)
        if action.act == "intent":
            intent = slots.pop("intent")
            return self._fill(f"intent:{intent}:{'+'.join(sorted(slots))}", slots)
        if action.act == "inform":
            (slot, value), = action.slots
            return self._fill(f"inform:{slot}", {slot: value})
        if action.act == "affirm_inform":
            (slot, value), = action.slots
            return JOINERS["affirm_inform"].format(first=self._fill("affirm", {}),
                                                   second=self._fill(f"inform:{slot}", {slot: value}))
        if action.act == "inform_inform":
            (first, one), (second, two) = action.slots
            return JOINERS["inform_inform"].format(first=self._fill(f"inform:{first}", {first: one}),
                                                   second=self._fill(f"inform:{second}", {second: two}))
        if action.act == "dont_know":
            return self._fill(f"dont_know:{slots['slot']}", {})
        return self._fill(action.act, {})

    @staticmethod
    def system(action: Action) -> str:
        slots = dict(action.slots)
        if action.act == "api_call":
            return " ".join(["api_call", slots.pop("api"), *slots.values()])
        if action.act == "end_call":
            return "api_call end_call"
        if action.act == "request":
            specific = f"request:{slots['slot']}:{slots['intent']}"
            alternative = slots.get("path") == "alternative" and specific in SYSTEM_UTTERANCES
            return SYSTEM_UTTERANCES[specific if alternative else f"request:{slots['slot']}"]
        if action.act == "change":
            return SYSTEM_UTTERANCES[f"change:{slots['slot']}"]
        if action.act == "done":
            return SYSTEM_UTTERANCES[f"done:{slots['intent']}:{slots['outcome']}"].format(**slots)
        return SYSTEM_UTTERANCES[action.act]

    @staticmethod
    def results(action: Action) -> list[str]:
        """API results as KB result lines ``entity R_attribute value``."""
        return [f"{fact} {value}" for fact, value in action.slots]


def realise(dialog: SelfPlayDialog, rng: random.Random, file: str, swapped: bool = False
            ) -> tuple[Dialog, list[int]]:
    """The dialog in the bAbI layout, and the bot-turn positions of its challenge actions."""
    realiser = Realiser(file, rng, swapped)
    items: list[tuple[str, str] | str] = []
    user: str | None = None
    challenge_turns: list[int] = []
    bot_turns = 0
    for index, action in enumerate(dialog.actions):
        if action.speaker == API:
            items.extend(realiser.results(action))
        elif action.speaker == SYSTEM:
            items.append((user or SILENCE, realiser.system(action)))
            user = None
            if index in dialog.challenge_actions:
                challenge_turns.append(bot_turns)
            bot_turns += 1
        else:
            user = realiser.user(action)
    return Dialog.build(items), challenge_turns


def _dialog(plan: BankingPlan, file: str, scenario: Scenario, index: int, number: int) -> tuple[Dialog, dict]:
    """The ``index``-th dialog of a scenario in a file, and its label (``number``: its place in the file)."""
    played = self_play(plan.seed, file, scenario, index, plan.readings)
    rng = random.Random(f"{plan.seed}:{file}:{scenario}:{index}:words")
    dialog, challenge_turns = realise(played, rng, file, plan.swapped_thirds)
    changed = plan.readings.changed()
    return dialog, {"seed": plan.seed, "split": file, "dialog": number, "intent": scenario.intent,
                    "templates": TEMPLATE_SPLIT_LABEL[file], "challenge": scenario.challenge,
                    "multiple": scenario.multiple, "challenge_turns": challenge_turns,
                    **({"readings": changed} if changed else {}),
                    **({"swapped_thirds": True} if plan.swapped_thirds else {})}


# The generator holds the whole corpus in memory before writing it: the resident memory per byte written, measured
# (docs/design.md), so that the command can refuse a corpus the machine cannot hold before it starts.
MEMORY_PER_BYTE = 6


def estimated_bytes(plan: BankingPlan, sample: int = 2) -> int:
    """About how many bytes the corpus takes (dialog files and labels): ``sample`` dialogs of each scenario of each
    file played and rendered, their mean size times the scenario's count. The candidates are under 100 KB."""
    size = 0
    for file in TEMPLATES_OF_FILE:
        for scenario, count in scenarios(plan, file):
            taken = min(sample, count)
            played = [_dialog(plan, file, scenario, index, index) for index in range(taken)]
            rendered = sum(len(babi_format.render_dialogs(DialogFile([dialog])).encode()) + len(render_labels([label]))
                           for dialog, label in played)
            size += rendered * count // taken
    return size


def generate(plan: BankingPlan, out: str | Path) -> list[Path]:
    """Write the four dialog files, the candidates and the labels sidecar under ``out`` (atomically)."""
    out = Path(out)
    labels: list[dict] = []
    candidates: dict[str, None] = {}
    files: dict[str, DialogFile] = {}
    for file in TEMPLATES_OF_FILE:
        dialogs = []
        for scenario, count in scenarios(plan, file):
            for index in range(count):
                dialog, label = _dialog(plan, file, scenario, index, len(dialogs))
                labels.append(label)
                dialogs.append(dialog)
                candidates.update((turn.bot, None) for turn in dialog.turns)
        files[file] = DialogFile(dialogs)
    with one_writer(out), staged_files(out) as staging:  # one writer; every file or none
        root = Path(staging)
        for file, dialog_file in files.items():
            babi_format.write_dialogs(root / dialog_file_name(BANKING_TASK, file), dialog_file)
        babi_format.write_candidates(root / task_candidates_name(BANKING_TASK), CandidateFile(sorted(candidates)))
        write_text_atomic(root / task_labels_name(BANKING_TASK), render_labels(labels))
    return [out / dialog_file_name(BANKING_TASK, file) for file in files] + [
        out / task_candidates_name(BANKING_TASK), out / task_labels_name(BANKING_TASK)]
