"""A rule-based system for task 6 (DSTC2), as section 4.1 of Bordes et al. (2017) describes it.

A dialog state over the three slots (cuisine, location, price range) is read off the history: slot values are
the words the KB results and API calls of the training dialogs use for them (plus a few spellings users say,
"center", "moderately"), and "any ..." / "doesn't matter" sets a slot to "don't care" (the one named, or the one the
bot just asked for). Rules fire on word matches, the dialog position, the entities found and the state; responses
are patterns with the entities filled in. What is not hand-written is learned from the training dialogs by
counting: the slot values, which pattern the system used to offer a restaurant (or to say there is none) for
each combination of constrained slots, and (``learned_policy``) what it did next in each dialog state where the
training dialogs agree. A pattern filled with entities is used only when the result is a candidate.

The paper's system reaches 40.7% per-response accuracy on dev and 33.3% on test; this one's dev figure on the
public task 6 is in docs/results.md.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from data.corpus import NO_RESULT, is_api_call, is_silence, parse_kb_result
from models.examples import TaskData, TurnExample

SLOTS = ("cuisine", "location", "price")
ATTRIBUTES = {"cuisine": "R_cuisine", "location": "R_location", "price": "R_price"}
DONT_CARE = "dontcare"
# Hand-written domain knowledge, as a rule-based system has: DSTC2's areas and price ranges (cuisines are learned).
KNOWN_VALUES = {"location": {"north", "south", "east", "west", "centre"}, "price": {"cheap", "moderate", "expensive"}}
SPELLINGS = {"center": "centre", "central": "centre", "moderately": "moderate", "inexpensive": "cheap"}
ANY_SLOT_WORDS = {"food": "cuisine", "type": "cuisine", "kind": "cuisine", "area": "location", "part": "location",
                  "town": "location", "where": "location", "price": "price", "priced": "price"}
DONT_CARE_PHRASES = ("dont care", "don't care", "doesnt matter", "does not matter", "doesn't matter", "any",
                     "whatever", "dont mind", "don't mind")
REQUESTS = (("post code", "post_code"), ("postcode", "post_code"), ("post", "post_code"), ("phone", "phone"),
            ("number", "phone"), ("address", "address"), ("price", "price"), ("area", "location"),
            ("part of town", "location"), ("food", "cuisine"), ("serve", "cuisine"))
ALTERNATIVE_WORDS = ("else", "different", "another", "other", "next", "alternative")
# What the bot says when asked about the restaurant on offer, by requested attribute.
ANSWERS = {"phone": "The phone number of {name} is {name}_phone", "address": "Sure , {name} is on {name}_address",
           "post_code": "The post code of {name} is {name}_post_code", "price": "{name} is in the {price} price range",
           "location": "{name} is a nice place in the {location} of town", "cuisine": "{name} serves {cuisine} food"}
GREETING_PREFIX = "Hello , welcome"
WELCOME = " you are welcome"
ASK = {"cuisine": "What kind of food would you like?", "location": "What part of town do you have in mind?",
       "price": "Would you like something in the cheap , moderate , or expensive price range?"}


def _tokens(text: str) -> list[str]:
    return [SPELLINGS.get(w, w) for w in re.findall(r"[a-z_']+", text.lower())]


@dataclass
class _State:
    slots: dict[str, str] = field(default_factory=dict)
    asked: str | None = None  # the slot the bot asked for last
    results: list[tuple[int, str]] = field(default_factory=list)  # (rating, name), best first
    facts: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> attribute -> value
    offered: list[str] = field(default_factory=list)
    called: dict[str, str] | None = None  # the slots of the last API call
    after_results: bool = False  # the last memory line is an API output


@dataclass
class DSTC2RuleBased:
    values: dict[str, set[str]]
    offer_patterns: dict[tuple[bool, ...], str]
    none_patterns: dict[tuple[bool, ...], str]
    candidates: frozenset[str]
    ask_order: tuple[str, ...] = SLOTS
    # What the system does when no other rule fires, per (slot states, API already called with them): "ask:<slot>",
    # "api_call", or a fixed utterance (a confirmation), the most frequent in the training dialogs.
    policy: dict[tuple, str] = field(default_factory=dict)
    kb_cuisines: frozenset[str] = frozenset()
    learned_policy: bool = False  # True: counted from training dialogs instead of the hand-written order
    min_share: float = 0.6  # tuned on dev

    # Fitting ------------------------------------------------------------------------------------------------

    @classmethod
    def fit(cls, task: TaskData, ask_order: Sequence[str] = SLOTS, learned_policy: bool = False) -> DSTC2RuleBased:
        if task.files.candidates is None:
            raise FileNotFoundError(f"task {task.task}: no candidates file")
        candidates = frozenset(task.candidates)
        trn = task.split("trn")
        values: dict[str, set[str]] = defaultdict(set, {slot: set(words) for slot, words in KNOWN_VALUES.items()})
        for example in trn:
            for text in (*example.memory, example.answer):
                fact = parse_kb_result(text)
                for slot, attribute in ATTRIBUTES.items():
                    if fact is not None and fact[1] == attribute:
                        values[slot].add(fact[2])
                if is_api_call(text) and text != NO_RESULT and len(text.split()) == 4:
                    for slot, value in zip(SLOTS, text.split()[1:], strict=True):
                        if not value.startswith("R_"):
                            values[slot].add(value)
        kb_cuisines = frozenset(fact[2] for e in trn for text in e.memory if (fact := parse_kb_result(text))
                                and fact[1] == "R_cuisine")
        system = cls(dict(values), {}, {}, candidates, tuple(ask_order), kb_cuisines=kb_cuisines,
                     learned_policy=learned_policy)
        system.offer_patterns, system.none_patterns = system._learn_patterns(trn)
        system.policy = system._learn_policy(trn)
        return system

    def _policy_key(self, state: _State) -> tuple:
        slots = tuple("-" if s not in state.slots else ("any" if state.slots[s] == DONT_CARE else "v") for s in SLOTS)
        wanted = {slot: state.slots.get(slot, DONT_CARE) for slot in SLOTS}
        cuisine = state.slots.get("cuisine", DONT_CARE)
        known_cuisine = cuisine == DONT_CARE or cuisine in self.kb_cuisines
        return (*slots, known_cuisine, state.called == wanted, bool(state.offered))

    def _action(self, text: str, state: _State) -> str | None:
        """What a bot utterance does, abstracted: ask a slot, call the API, or say a pattern of the state's slots."""
        for slot, question in ASK.items():
            if text == question:
                return f"ask:{slot}"
        if is_api_call(text):
            return "api_call"
        pattern = self._abstract(text, None, _State(called=dict(state.slots)))
        if "_" in pattern.replace("{", "").replace("}", "") and not any(
                p in pattern for p in ("{cuisine}", "{location}", "{price}")):
            return None  # names a restaurant: the offer rules' business
        return "say:" + pattern

    def _learn_policy(self, trn: Sequence[TurnExample]) -> dict[tuple, str]:
        counts: dict[tuple, Counter] = defaultdict(Counter)
        for example in trn:
            if not example.memory or WELCOME == example.answer:
                continue
            state = self._read(example)
            if state.after_results and is_silence(example.query):
                continue
            action = self._action(example.answer, state)
            if action is not None:
                counts[self._policy_key(state)][action] += 1
        # Only where the training dialogs agree (the most frequent action is the majority) does the count
        # override the hand-written order.
        return {key: c.most_common(1)[0][0] for key, c in counts.items()
                if c.most_common(1)[0][1] >= self.min_share * sum(c.values())}

    def _learn_patterns(self, trn: Sequence[TurnExample]) -> tuple[dict, dict]:
        """The most frequent offer / no-result pattern after API outputs, per set of constrained slots."""
        offers: dict[tuple[bool, ...], Counter] = defaultdict(Counter)
        nones: dict[tuple[bool, ...], Counter] = defaultdict(Counter)
        for example in trn:
            state = self._read(example)
            if not state.after_results or not is_silence(example.query) or state.called is None:
                continue
            key = self._constrained(state.called)
            if state.results:
                best = state.results[0][1]
                offers[key][self._abstract(example.answer, best, state)] += 1
            else:
                nones[key][self._abstract(example.answer, None, state)] += 1
        return ({k: c.most_common(1)[0][0] for k, c in offers.items()},
                {k: c.most_common(1)[0][0] for k, c in nones.items()})

    @staticmethod
    def _constrained(slots: dict[str, str]) -> tuple[bool, ...]:
        return tuple(slots.get(s, DONT_CARE) != DONT_CARE for s in SLOTS)

    def _abstract(self, text: str, name: str | None, state: _State) -> str:
        """A response with its entities replaced by {name}, {cuisine}, {location}, {price}."""
        slots = dict(state.called or {})
        if name is not None:
            slots.update({s: state.facts.get(name, {}).get(ATTRIBUTES[s], "") for s in SLOTS})
        words = []
        for word in text.split(" "):
            if name is not None and word == name:
                word = "{name}"
            else:
                for slot in SLOTS:
                    if word and word == slots.get(slot):
                        word = "{" + slot + "}"
                        break
            words.append(word)
        return " ".join(words)

    # Reading the history ------------------------------------------------------------------------------------

    def _read(self, example: TurnExample) -> _State:
        state = _State()
        for text, speaker in zip(example.memory, example.memory_speaker, strict=True):
            fact = parse_kb_result(text)
            if speaker == "user" and (fact is not None or text == NO_RESULT):
                if fact is not None:
                    state.facts.setdefault(fact[0], {})[fact[1]] = fact[2]
                    if fact[1] == "R_rating":
                        state.results.append((int(fact[2]) if fact[2].isdigit() else 0, fact[0]))
                        state.results.sort(key=lambda r: -r[0])
                state.after_results = True
                continue
            state.after_results = False
            if speaker == "user":
                self._update(state, text)
            else:
                self._bot_said(state, text)
        self._update(state, example.query)
        return state

    def _bot_said(self, state: _State, text: str) -> None:
        state.asked = next((slot for slot, question in ASK.items() if text == question), None)
        if "part of town" in text and state.asked is None:
            state.asked = "location"
        if is_api_call(text) and len(text.split()) == 4:
            state.called = {slot: (DONT_CARE if value.startswith("R_") else value)
                            for slot, value in zip(SLOTS, text.split()[1:], strict=True)}
            state.results, state.offered = [], []
        for _, name in state.results:
            if name in text.split() and name not in state.offered:
                state.offered.append(name)

    def _update(self, state: _State, text: str) -> None:
        tokens = _tokens(text)
        for slot in SLOTS:
            found = [w for w in tokens if w in self.values.get(slot, ())]
            if found:
                state.slots[slot] = found[-1]
        lowered = " ".join(tokens)
        if any(re.search(rf"\b{re.escape(phrase)}\b", lowered) for phrase in DONT_CARE_PHRASES):
            named = [ANY_SLOT_WORDS[w] for w in tokens if w in ANY_SLOT_WORDS]
            target = named[0] if named else state.asked
            if target is not None and target not in [s for s in SLOTS if any(
                    w in self.values.get(s, ()) for w in tokens)]:
                state.slots[target] = DONT_CARE

    # Answering ----------------------------------------------------------------------------------------------

    def _fill(self, pattern: str | None, name: str | None, state: _State) -> str | None:
        if pattern is None:
            return None
        values = {s: state.slots.get(s, "") for s in SLOTS}
        if name is not None:
            values.update({s: state.facts.get(name, {}).get(ATTRIBUTES[s], values[s]) for s in SLOTS})
        try:
            text = pattern.format(name=name or "", **values)
        except (KeyError, IndexError):
            return None
        return text if text in self.candidates else None

    def _offer(self, name: str, state: _State) -> str | None:
        key = self._constrained(state.called or state.slots)
        return self._fill(self.offer_patterns.get(key), name, state) or self._fill(
            "{name} is a nice restaurant in the {location} of town serving {cuisine} food", name, state)

    def _about(self, name: str, state: _State, request: str) -> str | None:
        return self._fill(ANSWERS[request], name, state)

    def predict(self, example: TurnExample) -> str:
        state = self._read(example)
        query = example.query.lower()
        if not example.memory:
            return next((c for c in sorted(self.candidates) if c.startswith(GREETING_PREFIX)), WELCOME)
        if re.search(r"\b(bye|goodbye)\b", query) or (re.search(r"\bthank", query) and not any(
                word in query for word, _ in REQUESTS)):
            return WELCOME
        current = state.offered[-1] if state.offered else None
        if state.after_results and is_silence(example.query):
            if state.results:
                return self._offer(state.results[0][1], state) or WELCOME
            key = self._constrained(state.called or state.slots)
            return self._fill(self.none_patterns.get(key), None, state) or ASK[self.ask_order[0]]
        if current is not None:
            requested = sorted((query.find(word), kind) for word, kind in REQUESTS if word in query)
            if requested:
                answer = self._about(current, state, requested[0][1])
                if answer:
                    return answer
            unchanged = state.called == {slot: state.slots.get(slot, DONT_CARE) for slot in SLOTS}
            if unchanged and any(re.search(rf"\b{w}\b", query) for w in ALTERNATIVE_WORDS):
                remaining = [name for _, name in state.results if name not in state.offered]
                if remaining:
                    return self._offer(remaining[0], state) or WELCOME
        missing = [slot for slot in self.ask_order if slot not in state.slots]
        wanted = {slot: state.slots.get(slot, DONT_CARE) for slot in SLOTS}
        call = "api_call " + " ".join(wanted[s] if wanted[s] != DONT_CARE else ATTRIBUTES[s] for s in SLOTS)
        action = self.policy.get(self._policy_key(state)) if self.learned_policy else None
        if action == "api_call" and call in self.candidates:
            return call
        if action is not None and action.startswith("ask:"):
            return ASK[action[4:]]
        if action is not None and action.startswith("say:"):
            said = self._fill(action[4:], None, state)
            if said:
                return said
        if state.called != wanted and (not missing or len(missing) < len(SLOTS) - 1) and call in self.candidates:
            return call
        if missing:
            return ASK[missing[0]]
        if current is not None:
            return self._fill("{name} is a great restaurant", current, state) or WELCOME
        return ASK[self.ask_order[0]]

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The one answer the rules give each example."""
        return [[self.predict(e)] for e in examples]
