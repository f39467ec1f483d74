"""A rule-based system for dialog-bAbI tasks 1-5 (section 4.1 of Bordes et al., 2017): 100% by construction.

It follows the simulator's policy from the dialog text alone: the request's slots are the KB-typed words of the
user's utterances (the last value said wins, so updates are applied), the dialog phase is read off the last bot
utterance, options come from the KB results in the history, best rating first. Three things are learned from the
training dialogs: the words that are KB entities of each type (from the KB), which user answers to a proposed
option mean yes or no (with a keyword rule for answers never seen in training), and what the bot replies when the
user answers an API call with neither a new field nor silence. Our simulator's task 2 ends at its last API call;
the public release's task 2 goes on with the user's thanks and "you're welcome", which the rules learn from its
training dialogs rather than know.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from data.babi.kb import FIELDS
from data.babi.patterns import (
    BOT_ADDRESS,
    BOT_ANYTHING_ELSE,
    BOT_ANYTHING_TO_UPDATE,
    BOT_BOOKING,
    BOT_GREETING,
    BOT_LOOKING,
    BOT_ON_IT,
    BOT_OPTION,
    BOT_OTHER_OPTION,
    BOT_PHONE,
    BOT_QUESTIONS,
    BOT_WELCOME,
)
from data.corpus import is_api_call, is_silence, parse_kb_result
from models.examples import USER, TaskData, TurnExample

_OPTION_PREFIX = BOT_OPTION.split("{", 1)[0]
# KB attribute of each request field.
_FIELD_ATTRIBUTES = {"cuisine": "R_cuisine", "location": "R_location", "party_size": "R_number", "price": "R_price"}
_REJECT_WORDS = frozenset({"no", "not", "don't", "else", "other", "another"})


@dataclass
class _History:
    """What the rules need from a turn's history."""

    slots: dict[str, str] = field(default_factory=dict)
    results: dict[str, dict[str, str]] = field(default_factory=dict)
    proposed: list[str] = field(default_factory=list)
    api_called: bool = False
    last_bot: str | None = None


class RuleBasedSystem:
    def __init__(self, field_values: dict[str, str], answers_to_options: dict[str, bool],
                 replies_after_calls: dict[str, str] | None = None) -> None:
        self.field_values = field_values  # word -> request field, from the KB
        self.answers_to_options = answers_to_options  # user answer -> accepted?
        # user utterance after an API call, naming no field -> the bot's reply
        self.replies_after_calls = replies_after_calls or {}

    @classmethod
    def fit(cls, task: TaskData) -> RuleBasedSystem:
        attribute_fields = {attribute: name for name, attribute in _FIELD_ATTRIBUTES.items()}
        field_values = {value: attribute_fields[attribute] for _entity, attribute, value in task.facts
                        if attribute in attribute_fields}
        system = cls(field_values, {})
        for example in task.split("trn"):
            last = example.memory[-1] if example.memory else ""
            if last.startswith(_OPTION_PREFIX):
                system.answers_to_options[example.query] = example.answer == BOT_BOOKING
            elif is_api_call(last) and not is_silence(example.query) and not system._mentions_a_field(example.query):
                system.replies_after_calls[example.query] = example.answer
        return system

    def _read(self, example: TurnExample) -> _History:
        history = _History()
        for text, speaker in zip(example.memory, example.memory_speaker, strict=True):
            fact = parse_kb_result(text) if speaker == USER else None
            if fact:
                entity, attribute, value = fact
                history.results.setdefault(entity, {})[attribute] = value
            elif speaker == USER:
                self._fill(history.slots, text)
            else:
                history.last_bot = text
                history.api_called |= is_api_call(text)
                if text.startswith(_OPTION_PREFIX):
                    history.proposed.append(text[len(_OPTION_PREFIX):])
        self._fill(history.slots, example.query)
        return history

    def _fill(self, slots: dict[str, str], utterance: str) -> None:
        for word in utterance.split():
            if word in self.field_values:
                slots[self.field_values[word]] = word

    def _mentions_a_field(self, utterance: str) -> bool:
        return any(word in self.field_values for word in utterance.split())

    def _accepts(self, answer: str) -> bool:
        if answer in self.answers_to_options:
            return self.answers_to_options[answer]
        return not (_REJECT_WORDS & set(answer.split()))

    def _reply_after_call(self, query: str) -> str:
        """The learned reply; for words never seen there, the reply training gave most often."""
        if query in self.replies_after_calls:
            return self.replies_after_calls[query]
        return Counter(self.replies_after_calls.values()).most_common(1)[0][0]

    @staticmethod
    def _next_option(history: _History) -> str:
        """The best-rated restaurant not yet proposed. Dialogs outside the simulator's rules (a user who turns every
        option down, a call with no result) get the best again, or the looking line: an answer, never an error."""
        remaining = [name for name in history.results if name not in history.proposed] or list(history.results)
        if not remaining:
            return BOT_LOOKING
        best = max(remaining, key=lambda name: int(history.results[name].get("R_rating", "0")))
        return BOT_OPTION.format(restaurant=best)

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The one answer the rules give each example."""
        return [[self.predict(e)] for e in examples]

    def predict(self, example: TurnExample) -> str:
        history = self._read(example)
        last, query = history.last_bot, example.query
        if last is None:
            return BOT_GREETING
        if last == BOT_GREETING:
            booked = [word for word in query.split() if word in history.results]
            return BOT_BOOKING if booked else BOT_ON_IT
        if last == BOT_ON_IT or last in BOT_QUESTIONS.values():
            missing = [name for name in FIELDS if name not in history.slots]
            return BOT_QUESTIONS[missing[0]] if missing else BOT_LOOKING
        if last == BOT_LOOKING:
            if history.results and not history.api_called:
                return self._next_option(history)  # task 3: the results came with the dialog
            return "api_call " + " ".join(history.slots[name] for name in FIELDS)
        if is_api_call(last) or last == BOT_ANYTHING_TO_UPDATE:
            if is_api_call(last) and is_silence(query):
                return self._next_option(history)
            if self._mentions_a_field(query):
                return BOT_ANYTHING_TO_UPDATE
            if is_api_call(last) and self.replies_after_calls:
                return self._reply_after_call(query)
            return BOT_LOOKING
        if last.startswith(_OPTION_PREFIX):
            return BOT_BOOKING if self._accepts(query) else BOT_OTHER_OPTION
        if last == BOT_OTHER_OPTION:
            return self._next_option(history)
        if last == BOT_BOOKING or last.startswith("here it is "):
            booked = history.proposed[-1] if history.proposed else next(iter(history.results))
            if "phone" in query.split():
                return BOT_PHONE.format(phone=history.results[booked]["R_phone"])
            if "address" in query.split():
                return BOT_ADDRESS.format(address=history.results[booked]["R_address"])
            return BOT_ANYTHING_ELSE
        if last == BOT_ANYTHING_ELSE:
            return BOT_WELCOME
        return BOT_GREETING
