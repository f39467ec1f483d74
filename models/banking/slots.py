"""What the state ranker (``models.banking.state_ranker``) knows of a domain, all learned from the training dialogs:
the slot type of each entity word, the kinds of API result, the slot each request asks for, and the goals (the slot
types each training dialog's calls take).

Nothing here names a banking slot or API. The types come from the API calls of the training answers: every
argument position of every API (``check_amount`` argument 2, ``transfer`` argument 3, ...) is a slot, and positions
that share a value are one slot type (union-find), so the account of ``check_account``, of ``check_amount`` and of
``transfer`` become one type. A request is a bot utterance without entities; the slot it asks for is the type the
user's next turn gives in most of the training dialogs where it was said. A goal is the set of slot types a
training dialog's API calls take (which slots the caller's request needs filled), unless another dialog's holds it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from data.corpus import is_api_call, parse_kb_result
from models.examples import TurnExample

NO_KIND = "none"
MAX_CLOSED_VALUES = 8  # an attribute with at most this many values (a status) has a kind per value
MIN_REQUEST_SHARE = 0.5  # a request asks for the type its next user turn gives at least this often


def api_positions(answer: str) -> list[tuple[str, str]]:
    """``(api:position, value)`` of each argument of an API call, none for other utterances."""
    if not is_api_call(answer):
        return []
    words = answer.split(" ")
    return [(f"{words[1]}:{i}", value) for i, value in enumerate(words[2:], start=1)] if len(words) > 2 else []


def _slot_types(calls: Sequence[str]) -> dict[str, str]:
    """Value word -> slot type: argument positions sharing a value merged (union-find), each type named after a
    ``check_X`` API among its positions (X), else after its first position."""
    parent: dict[str, str] = {}

    def find(position: str) -> str:
        while parent.setdefault(position, position) != position:
            parent[position] = parent[parent[position]]
            position = parent[position]
        return position

    first_position: dict[str, str] = {}
    for call in calls:
        for position, value in api_positions(call):
            if value in first_position:
                parent[find(position)] = find(first_position[value])
            else:
                first_position[value] = position
                find(position)
    groups: dict[str, list[str]] = defaultdict(list)
    for position in parent:
        groups[find(position)].append(position)
    names = {}
    for root, positions in groups.items():
        checks = sorted(p.split(":")[0].removeprefix("check_") for p in positions if p.startswith("check_"))
        names[root] = checks[0] if checks else sorted(positions)[0].replace(":", "_")
    return {value: names[find(position)] for value, position in sorted(first_position.items())}


@dataclass(frozen=True)
class SlotLexicon:
    """Entity word -> slot type, the result kinds, and the slot type each request template asks for."""

    types: dict[str, str]
    kinds: tuple[str, ...]  # index 0 is NO_KIND
    request_types: dict[str, str]  # template -> slot type
    goals: tuple[tuple[str, ...], ...] = ()  # the slot types a training dialog's API calls take, the largest sets

    @classmethod
    def learn(cls, trn: Sequence[TurnExample]) -> SlotLexicon:
        """From the training examples: API calls give the types; result lines give the kinds (an attribute with
        few values, a status, has a kind per value; the values of one with many, a balance, become entities of its
        type); the requests' following turns give the type each asks for."""
        types = _slot_types([e.answer for e in trn])
        values: dict[str, set[str]] = defaultdict(set)
        for e in trn:
            for line in e.memory:
                fact = parse_kb_result(line)
                if fact is not None:
                    values[fact[1]].add(fact[2])
        kinds = [NO_KIND]
        for attribute, seen in sorted(values.items()):
            if len(seen) <= MAX_CLOSED_VALUES:
                kinds += [f"{attribute} {value}" for value in sorted(seen)]
            else:
                kinds.append(attribute)
                for value in seen:
                    if len(value.split(" ")) == 1:
                        types.setdefault(value, attribute.removeprefix("R_"))
        lexicon = cls(types, tuple(kinds), {})
        # The slot each request asks for: the type of the next user turn (the next example's query).
        following: dict[str, Counter[str]] = defaultdict(Counter)
        said: Counter[str] = Counter()
        by_turn = {(e.dialog_id, e.turn): e for e in trn}
        for e in trn:
            template = lexicon.template(e.answer)
            if is_api_call(e.answer) or template != e.answer:
                continue
            said[template] += 1
            after = by_turn.get((e.dialog_id, e.turn + 1))
            if after is not None:
                following[template].update({types[w] for w in after.query.split(" ") if w in types})
        requests = {}
        for template, counts in following.items():
            if counts:
                kind, n = counts.most_common(1)[0]
                if n >= MIN_REQUEST_SHARE * said[template]:
                    requests[template] = kind
        # A dialog's goal: the slot types its API calls take. A dialog cut short (too many invalid values) holds a
        # part of its intent's, so a goal inside another is left out.
        called: dict[str, set[str]] = defaultdict(set)
        for e in trn:
            called[e.dialog_id].update(types[v] for _, v in api_positions(e.answer) if v in types)
        sets = {frozenset(goal) for goal in called.values() if goal}
        goals = sorted(tuple(sorted(goal)) for goal in sets if not any(goal < other for other in sets))
        return cls(types, lexicon.kinds, requests, tuple(goals))

    @property
    def slot_types(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.types.values())))

    def template(self, text: str) -> str:
        """``text`` with each entity word replaced by ``<type>``."""
        return " ".join(f"<{self.types[w]}>" if w in self.types else w for w in text.split(" "))

    def kind(self, attribute: str, value: str) -> int:
        """The index of a result line's kind: its (attribute, value) pair for a closed attribute, else its
        attribute; 0 (NO_KIND) for an attribute training never showed."""
        for key in (f"{attribute} {value}", attribute):
            if key in self.kinds:
                return self.kinds.index(key)
        return 0

    def to_json(self) -> str:
        return json.dumps({"types": self.types, "kinds": list(self.kinds), "request_types": self.request_types,
                           "goals": [list(goal) for goal in self.goals]})
