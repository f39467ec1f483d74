"""Dialogue self-play for the banking domain: a finite-state system bot and a user bot exchanging actions.

The system bot has one state per slot of the intent's flow: it requests the slot, validates the value with an
API call whose result is part of the dialog (a failed check also lists the values the API accepts, as the paper's
Table 2 does), asks whether to change an invalid value (at most 3 consecutive invalid answers, then the dialog
ends; a user who says no ends the request), asks for a confirmation before blocking a card (Table 2), and once
every slot is valid issues the intent's final API call, which succeeds or fails at random. The user bot answers
from its profile and goal, sometimes with invalid values, and volunteers a varying number of slots in its first
turn.

A :class:`Scenario` also asks for one out-of-pattern (OOP) phenomenon of section 3.3 (once, or twice for the
multiple-OOP sets). The bot turns that answer the phenomenon are marked as challenge turns, and only those whose
right answer training never gives in that context: docs/banking-audit.md says what each case marks and why.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

from data.banking.domain import (
    ALTERNATIVE_SLOTS,
    SLOTS,
    UserProfile,
    invalid_values,
    valid_values,
)
from data.banking.labels import NONE
from data.banking.readings import DEFAULT, Readings

USER, SYSTEM, API = "user", "system", "api"
MULTIPLE_INTENTS = ("transfer",)  # twice over different slots needs a flow of several slots
MAX_INVALID = 3
P_INVALID = 0.25
P_FORGETS_ID = 0.3
# Volunteered slots of the first user turn: none or an odd number in training, an even number for new_api.
TRAINING_VOLUNTEERED: dict[str, tuple[tuple[str, ...], ...]] = {
    "transfer": ((), ("account",), ("account", "partner", "amount")),
    "cancel_transfer": ((), ("transaction",)),
    "block_card": ((), ("card",), ("account",)),
    "transaction_history": ((), ("note",)),
    "account_balance": ((), ("account",)),
    "account_limit": ((), ("account",)),
}
NEW_API_VOLUNTEERED: dict[str, tuple[tuple[str, ...], ...]] = {
    "transfer": (("account", "partner"), ("account", "amount"), ("partner", "amount")),
    "block_card": (("account", "card_type"),),
}
# Slot orders never used in training: every other order of the one flow whose slots do not depend on each other.
REORDERED: dict[str, tuple[tuple[str, ...], ...]] = {
    "transfer": tuple(order for order in itertools.permutations(SLOTS["transfer"]) if order != SLOTS["transfer"]),
}
CONFIRMED = ("block_card",)  # the intents whose final call waits for the user's yes (Table 2)
# Which OOP cases each intent's flow makes possible.
APPLICABLE: dict[str, tuple[str, ...]] = {
    "turn_compression": tuple(SLOTS),
    "new_api": tuple(NEW_API_VOLUNTEERED),
    "reordering": tuple(REORDERED),
    "another_slot": ("transfer",),
    "audit_more": ("transfer",),
}


@dataclass(frozen=True)
class Action:
    speaker: str
    act: str
    slots: tuple[tuple[str, str], ...] = ()

    def value(self, slot: str) -> str:
        return dict(self.slots)[slot]


@dataclass(frozen=True)
class Scenario:
    intent: str
    challenge: str = NONE
    multiple: bool = False


@dataclass
class SelfPlayDialog:
    """The actions of one dialog, and the indices of the system actions that answer its OOP phenomenon."""

    scenario: Scenario
    actions: list[Action]
    challenge_actions: list[int] = field(default_factory=list)  # indices into actions
    occurrences: int = 0  # how many times the phenomenon happened

    @property
    def complete(self) -> bool:
        """Whether the dialog holds its phenomenon (twice for a multiple-OOP scenario)."""
        if self.scenario.challenge == NONE:
            return True
        return bool(self.challenge_actions) and self.occurrences >= (2 if self.scenario.multiple else 1)


def _api_name(intent: str, slot: str, alternative: bool) -> str:
    if alternative and intent == "cancel_transfer" and slot == "partner":
        return "find_transactions"
    if alternative and intent == "block_card" and slot == "account":
        return "find_cards"
    return f"check_{slot}"


class SystemBot:
    """One state per slot; ``react`` returns the system and API actions until the user must speak again."""

    def __init__(self, intent: str, profile: UserProfile, rng: random.Random, order: tuple[str, ...] | None = None,
                 one_call: bool = False):
        self.intent, self.profile, self.rng = intent, profile, rng
        self.order = order or SLOTS[intent]
        self.one_call = one_call  # the slots of an opening checked in one API call (Readings.new_api)
        self.alternative = False
        self.filled: dict[str, str] = {}
        self.invalid_in_a_row = 0
        self.state: str | None = None  # the slot being filled
        self.confirming = False  # the confirmation question was asked
        self.done = False

    def greet(self) -> list[Action]:
        return [Action(SYSTEM, "greet")]

    def react(self, user: Action) -> list[Action]:
        if user.act == "thanks":
            self.done = True
            return [Action(SYSTEM, "end_call")]
        if user.act == "affirm" and self.confirming:
            self.confirming = False
            return self._execute()
        if user.act == "affirm":  # to "would you like to change it?"
            return [self._request(self.state)]
        if user.act == "deny":  # no change, no confirmation: the request ends
            self.confirming = False
            return [Action(SYSTEM, "abandon")]
        if user.act == "dont_know":
            self.alternative = True
            self.order = ALTERNATIVE_SLOTS[self.intent]
            return [self._request(self._missing()[0])]
        given = dict(user.slots)
        if user.act == "intent" and any(slot in ALTERNATIVE_SLOTS.get(self.intent, ()) and slot not in self.order
                                        for slot in given):
            self.alternative = True
            self.order = ALTERNATIVE_SLOTS[self.intent]
        actions: list[Action] = []
        if self.one_call and user.act == "intent" and sum(slot in self.order for slot in given) > 1:
            actions = self._validate_together([(slot, given[slot]) for slot in self.order if slot in given])
            given = {}
            if self.state is not None:  # invalid: the change question was asked
                return actions
        for slot in [s for s in self.order if s in given]:  # validate in the flow's order
            actions += self._validate(slot, given[slot])
            if self.state == slot and slot not in self.filled:  # invalid: the change question was asked
                return actions
            if self.done:
                return actions
        missing = self._missing()
        if missing:
            return actions + [self._request(missing[0])]
        if self.intent in CONFIRMED:
            self.confirming = True
            return actions + [Action(SYSTEM, "confirm", (("intent", self.intent),))]
        return actions + self._execute()

    def _missing(self) -> list[str]:
        return [slot for slot in self.order if slot not in self.filled]

    def _request(self, slot: str | None) -> Action:
        self.state = slot
        path = (("path", "alternative"),) if self.alternative else ()
        return Action(SYSTEM, "request", (("slot", str(slot)), ("intent", self.intent), *path))

    def _validate(self, slot: str, value: str) -> list[Action]:
        self.state = slot
        name = _api_name(self.intent, slot, self.alternative)
        arguments = [(slot, value)]
        if slot in ("amount", "card_type") and "account" in self.filled:  # checked against the account
            arguments.insert(0, ("account", self.filled["account"]))
        facts, valid = self._result(slot, value)
        actions = [Action(SYSTEM, "api_call", (("api", name), *arguments)), Action(API, "result", facts)]
        if valid:
            self.filled[slot] = value
            self.invalid_in_a_row = 0
            return actions
        self.filled.pop(slot, None)
        self.invalid_in_a_row += 1
        if self.invalid_in_a_row >= MAX_INVALID:
            self.done = True
            return actions + [Action(SYSTEM, "too_many"), Action(SYSTEM, "end_call")]
        return actions + [Action(SYSTEM, "change", (("slot", slot),))]

    def _result(self, slot: str, value: str) -> tuple[tuple[tuple[str, str], ...], bool]:
        """The result lines of checking ``value`` for ``slot`` (given the slots filled), and whether it is valid."""
        valid = value in valid_values(self.profile, slot, self.filled)
        facts: list[tuple[str, str]] = [(f"{value} R_status", "valid" if valid else "invalid")]
        if not valid:  # the paper's "list of available accounts joint , savings"
            facts += [(f"{v} R_available", slot) for v in valid_values(self.profile, slot, self.filled)]
        name = _api_name(self.intent, slot, self.alternative)
        if valid and name == "find_transactions":
            facts += [(f"{t.id} R_amount", t.amount) for t in self.profile.transactions_with(value)]
        if valid and name == "find_cards":
            facts += [(f"{c.id} R_type", c.type) for c in self.profile.cards_of(value)]
        return tuple(facts), valid

    def _validate_together(self, values: list[tuple[str, str]]) -> list[Action]:
        """One API call for every value of an opening (a call training never makes). As separate checks would, it
        checks them in the flow's order up to the first invalid one, whose change question follows; each value
        checked has the result lines its own check gives."""
        facts: tuple[tuple[str, str], ...] = ()
        valid = True
        for slot, value in values:
            self.state = slot
            found, valid = self._result(slot, value)
            facts += found
            if not valid:
                break
            self.filled[slot] = value
        actions = [Action(SYSTEM, "api_call", (("api", "check_" + "_".join(slot for slot, _ in values)), *values)),
                   Action(API, "result", facts)]
        if valid:
            self.state, self.invalid_in_a_row = None, 0
            return actions
        self.invalid_in_a_row += 1
        return actions + [Action(SYSTEM, "change", (("slot", self.state),))]

    def _execute(self) -> list[Action]:
        if self.intent == "block_card" and self.alternative:
            card = next(c for c in self.profile.cards_of(self.filled["account"]) if c.type == self.filled["card_type"])
            arguments: list[tuple[str, str]] = [("card", card.id)]
        elif self.intent == "cancel_transfer":
            arguments = [("transaction", self.filled["transaction"])]
        else:
            arguments = [(slot, self.filled[slot]) for slot in SLOTS[self.intent]]
        success = self.rng.random() < 0.8
        outcome = "success" if success else "failed"
        facts: list[tuple[str, str]] = [(f"{self.intent} R_status", outcome)]
        details: list[tuple[str, str]] = []
        if success and self.intent in ("account_balance", "account_limit"):
            kind = "balance" if self.intent == "account_balance" else "limit"
            account = self.filled["account"]
            value = (self.profile.balances if kind == "balance" else self.profile.limits)[account]
            facts.append((f"{account} R_{kind}", value))
            details.append((kind, value))
        return [Action(SYSTEM, "api_call", (("api", self.intent), *arguments)),
                Action(API, "result", tuple(facts)),
                Action(SYSTEM, "done", (("intent", self.intent), ("outcome", outcome), *arguments,
                                        *((slot, v) for slot, v in self.filled.items() if slot not in dict(arguments)),
                                        *details))]


class UserBot:
    """Answers from a goal drawn from the profile, sometimes with an invalid value."""

    def __init__(self, intent: str, profile: UserProfile, rng: random.Random, declines: float = Readings.declines):
        self.intent, self.profile, self.rng = intent, profile, rng
        self.declines = declines  # the share of change questions answered no (the request ends there)
        self.goal = self._goal()
        self.forgets_id = intent in ALTERNATIVE_SLOTS and rng.random() < P_FORGETS_ID
        self.is_challenge = False
        self.said_dont_know = False

    def _goal(self) -> dict[str, str]:
        rng, profile = self.rng, self.profile
        if self.intent == "cancel_transfer":
            t = rng.choice(profile.transactions)
            return {"transaction": t.id, "partner": t.partner}
        if self.intent == "block_card":
            c = rng.choice(profile.cards)
            return {"card": c.id, "account": c.account, "card_type": c.type}
        if self.intent == "transaction_history":
            return {"note": rng.choice(profile.transactions).note}
        goal = {"account": rng.choice(profile.accounts)}
        if self.intent == "transfer":
            goal["partner"] = rng.choice(profile.partners)
            goal["amount"] = rng.choice(valid_values(profile, "amount", goal))
        return goal

    def answer(self, slot: str, filled: dict[str, str], valid: bool | None = None) -> str:
        """A value for ``slot``: the goal's when valid (or another valid one if the dialog made it invalid),
        otherwise one the API rejects; validity is drawn (P_INVALID) unless ``valid`` says."""
        if valid is None:
            valid = self.rng.random() >= P_INVALID
        context = {**self.goal, **filled}
        pool = (valid_values if valid else invalid_values)(self.profile, slot, context)
        if valid and self.goal.get(slot) in pool:
            return self.goal[slot]
        return self.rng.choice(pool) if pool else self.goal[slot]

    def opening(self, volunteered: tuple[str, ...], filled: dict[str, str]) -> Action:
        slots = tuple((slot, self.answer(slot, filled)) for slot in volunteered)
        return Action(USER, "intent", (("intent", self.intent), *slots))

    def react(self, system: Action, filled: dict[str, str]) -> Action:
        if system.act == "change":
            return Action(USER, "deny" if self.rng.random() < self.declines else "affirm")
        if system.act == "confirm":
            return Action(USER, "affirm")
        if system.act in ("done", "abandon"):
            return Action(USER, "thanks")
        slot = system.value("slot")
        if slot == SLOTS[self.intent][0] and self.forgets_id and not self.said_dont_know:
            self.said_dont_know = True
            return Action(USER, "dont_know", (("slot", slot),))
        return Action(USER, "inform", ((slot, self.answer(slot, filled)),))


class ChallengeUser(UserBot):
    """The user bot of a challenge scenario: it brings the OOP phenomenon about (once, or twice when multiple), and
    never says no to a change before it has."""

    def __init__(self, scenario: Scenario, profile: UserProfile, rng: random.Random,
                 readings: Readings = DEFAULT):
        super().__init__(scenario.intent, profile, rng, readings.declines)
        self.any_later_slot = readings.another_slot == "any_later_slot"
        self.challenge = scenario.challenge
        self.wanted = 2 if scenario.multiple else 1
        self.occurrences = 0
        self.audited: set[str] = set()  # audit more: slots given an invalid value, so that they are asked again

    def needs_more(self) -> bool:
        return self.challenge != NONE and self.occurrences < self.wanted

    def react(self, system: Action, filled: dict[str, str]) -> Action:
        """The next user action; ``is_challenge`` tells afterwards whether it was the phenomenon."""
        self.is_challenge = False
        if not self.needs_more() or system.act not in ("change", "request"):
            return super().react(system, filled)
        slot = system.value("slot")
        if self.challenge == "turn_compression":
            if system.act == "change":  # "yes, change it to X" in one turn
                self.occurrences += 1
                self.is_challenge = True
                return Action(USER, "affirm_inform", ((slot, self.answer(slot, filled, valid=True)),))
            return Action(USER, "inform", ((slot, self.answer(slot, filled, valid=False)),))
        if system.act == "change":
            return Action(USER, "affirm")
        if self.challenge == "another_slot":
            other = self._another_slot(slot, filled)
            if other:
                self.occurrences += 1
                self.is_challenge = True
                return Action(USER, "inform", ((other, self.answer(other, filled, valid=True)),))
        if self.challenge == "audit_more":
            return self._audit_more(slot, filled) or super().react(system, filled)
        return super().react(system, filled)

    def _another_slot(self, slot: str, filled: dict[str, str]) -> str | None:
        """The slot named instead of the one asked: the partner for the account, or (any_later_slot) one of the
        slots after the asked one not filled yet."""
        if not self.any_later_slot:
            return "partner" if slot == "account" else None
        later = self._later(slot, filled)
        return self.rng.choice(later) if later else None

    def _later(self, slot: str, filled: dict[str, str]) -> list[str]:
        """The slots after ``slot`` in the intent's flow that are not filled yet."""
        flow = SLOTS[self.intent]
        return [s for s in flow[flow.index(slot) + 1:] if s not in filled] if slot in flow else []

    def _audit_more(self, slot: str, filled: dict[str, str]) -> Action | None:
        """Table 7: asked again for a slot after changing it, the user gives it and a later slot not asked yet.
        The first time a slot with later ones is asked, it gets an invalid value (or, for a single occurrence,
        half the time a plain answer when a later slot could still be audited) so that it is asked again. In a
        multiple dialog the first extra value is invalid, so that its slot is asked again for the second."""
        later = self._later(slot, filled)
        if not later:
            return None
        if slot not in self.audited:
            if self.wanted == 1 and len(later) > 1 and self.rng.random() < 0.5:
                return None
            self.audited.add(slot)
            return Action(USER, "inform", ((slot, self.answer(slot, filled, valid=False)),))
        again = self.wanted - self.occurrences > 1
        extra = later[0] if again else self.rng.choice(later)
        value = self.answer(slot, filled, valid=True)
        if again:
            self.audited.add(extra)
        self.occurrences += 1
        self.is_challenge = True
        return Action(USER, "inform_inform", ((slot, value),
                                              (extra, self.answer(extra, {**filled, slot: value}, valid=not again))))


def _reordered_request(readings: Readings, system: SystemBot, request: Action, marked: list[int],
                       after_change: bool) -> bool:
    """Whether a request of a reordered flow is scored: the last slot's, once every other is valid (the default);
    or (every_request) any request of a slot other than the one training's order asks for next (not the same
    slot asked again after a change question, which training asks the same way)."""
    slot = request.value("slot")
    if readings.reordering == "every_request":
        return not after_change and slot != next((s for s in SLOTS[system.intent] if s not in system.filled), None)
    return not marked and system.order[-1] == slot and len(system.filled) == len(system.order) - 1


def _is_check(action: Action) -> bool:
    return action.act == "api_call" and action.value("api").startswith(("check_", "find_"))


def play(scenario: Scenario, profile: UserProfile, rng: random.Random, max_turns: int = 60,
         readings: Readings = DEFAULT) -> SelfPlayDialog:
    """One dialog of the scenario, with its OOP phenomenon where the flow allows it. The system actions marked as
    answering it (by default; ``readings`` names the other readings): the checks of the values a compressed,
    audit-more or another-slot user turn gives; the checks of a new-API opening but a first one that a one-slot
    training opening also gets; the request for the last slot of a reordered flow, made once every other slot is
    valid. A multiple-OOP dialog marks every occurrence's turns."""
    intent, challenge = scenario.intent, scenario.challenge
    order = rng.choice(REORDERED[intent]) if challenge == "reordering" else None
    one_call = challenge == "new_api" and readings.new_api == "one_call"
    system = SystemBot(intent, profile, rng, order, one_call)
    user = ChallengeUser(scenario, profile, rng, readings)
    second_only = scenario.multiple and readings.multiple_scored == "second"
    if challenge == "new_api":
        volunteered = rng.choice(NEW_API_VOLUNTEERED[intent])
    elif challenge != NONE:
        volunteered = ()  # the phenomenon happens while the slots are requested one by one
    else:
        volunteered = rng.choice(TRAINING_VOLUNTEERED[intent])
    if intent == "block_card" and "account" in volunteered:
        user.forgets_id = True
    actions = system.greet()
    marked: list[int] = []
    turn = user.opening(volunteered, system.filled)
    turn_is_challenge = challenge == "new_api"
    for _ in range(max_turns):
        actions.append(turn)
        replies = system.react(Action(USER, "inform", turn.slots) if turn.act.endswith("_inform") else turn)
        # (index, slot checked) of each check among the replies
        checks = [(offset, reply.slots[-1][0]) for offset, reply in enumerate(replies, start=len(actions))
                  if _is_check(reply)]
        if turn_is_challenge and challenge == "new_api" and not one_call and checks and \
                (checks[0][1],) in TRAINING_VOLUNTEERED[intent]:
            checks = checks[1:]  # the answer training gives to a one-slot opening
        if turn_is_challenge and not (second_only and user.occurrences < 2):
            marked += [offset for offset, _ in checks]
        last = replies[-1]
        if challenge == "reordering" and last.act == "request" and \
                _reordered_request(readings, system, last, marked, after_change=turn.act == "affirm"):
            marked.append(len(actions) + len(replies) - 1)
        actions += replies
        if system.done:
            break
        turn = user.react(last, system.filled)
        turn_is_challenge = user.is_challenge
    occurrences = 1 if challenge in ("new_api", "reordering") and marked else user.occurrences
    return SelfPlayDialog(scenario, actions, marked, occurrences)
