"""A dialog state tracker in TensorFlow ops, whose state the template model reads as words of the query.

On task 6 (DSTC2) the template model picked the right API call less often on dev than the rule-based system
(section 4.1) does: an API call is made once each slot of the call (cuisine, area, price) is known or
"don't care", and the words that say so ("any part of town", "i dont care" after "What part of town ...?") are
spread over turns, which a bag-of-words memory does not add up. Hybrid Code Networks feed the tracked state to
the policy; here the state is a few words put before the delexicalised query, for instance
``state_cuisine_value state_location_dontcare state_price_unknown state_call_none``:

- per slot, the last user turn that gave it a value or said "don't care" of it decides (``unknown`` if none did);
- "don't care" of which slot: one the turn names ("any area"), else the one the bot's last question asked for;
- ``state_call_same`` when the latest API call asked for exactly this state (``changed``: another; ``none``);
- (with KB entries in the spec) ``state_match_none`` when no entry of the KB has every slot value the state holds
  (``some``: one does). A dialog manager knows its database: DSTC2's bots say there is no such restaurant before
  any API call as well as after one (docs/babi.md counts both), and the call's outcome alone cannot tell a model
  the first kind.

What is learned from the training dialogs: the slots (the kinds of the API calls' arguments, in order), their
values (the entity lexicon), and which slot a bot utterance asks for (the slot most of its replies give a value
of). What is hand-written (named, and ablated in Table 2 as ``template_memn2n-no_dialog_state``): the phrases that
say "don't care", the words that name a slot, and a few spellings, all the rule-based system's. The KB entries are
the training KB's (its file and the training dialogs' API results), given when the model is to read the match
(``TemplateConfig.kb_match``, ablated as ``hcn-no_kb_match``).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import tensorflow as tf

from data.corpus import API_CALL_PREFIX, KB_RESULT_PATTERN, NO_RESULT, is_api_call, parse_kb_result
from models.babi.rule_based_dstc2 import ANY_SLOT_WORDS, DONT_CARE_PHRASES, SPELLINGS
from models.examples import BOT, USER, TurnExample, pad_batch
from models.features import lookup_table

STATES = ("unknown", "value", "dontcare")
CALLS = ("none", "same", "changed")
MATCHES = ("none", "some")
# A bot utterance asks for a slot when at least this share of its replies give a value of it, and twice as many
# as give the next slot ("Hello , welcome ..." is answered with any slot: it asks for none).
ASKED_SHARE, ASKED_MARGIN, ASKED_MIN = 0.25, 2.0, 5


@dataclass(frozen=True)
class StateSpec:
    """What the tracker knows: learned from the training dialogs (``learn``) or given (tests, other domains)."""

    slots: tuple[str, ...]  # the API call's arguments, in order (entity kinds: "cuisine", "location", "price")
    values: Mapping[str, str]  # entity word -> its slot
    asked: Mapping[str, str]  # bot utterance -> the slot it asks for
    slot_words: Mapping[str, str]  # a word that names a slot ("area") -> the slot
    dont_care: tuple[str, ...] = DONT_CARE_PHRASES
    spellings: Mapping[str, str] | None = None  # word -> the value's spelling ("center" -> "centre")
    # The KB's entries as their value of each slot ("" where an entry has none); empty: no match is tracked.
    entries: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def learn(cls, types: Mapping[str, str], examples: Sequence[TurnExample],
              facts: Iterable[tuple[str, str, str]] = ()) -> StateSpec:
        """The slots, values and questions of the training ``examples``; ``types``: the entity lexicon; ``facts``
        (entity, attribute, value): the KB whose entries the state is matched against (none: no match tracked)."""
        by_position = argument_kinds(types, api_arguments(e.answer for e in examples))
        slots = tuple(by_position[p].most_common(1)[0][0] for p in sorted(by_position))
        values = {word: kind for word, kind in types.items() if kind in slots}
        replies: dict[str, Counter] = defaultdict(Counter)
        totals: Counter = Counter()
        for example in examples:  # each (bot turn, user reply) pair is the last bot line of memory and the query
            lines = [(s, t) for t, s in zip(example.memory, example.memory_speaker, strict=True)
                     if not is_result_line(s, t)]
            if not lines or lines[-1][0] != BOT or is_api_call(lines[-1][1]):
                continue
            totals[lines[-1][1]] += 1
            replies[lines[-1][1]].update({values[w] for w in example.query.split(" ") if w in values})
        asked = {}
        for utterance, counts in replies.items():
            ranked = [*counts.most_common(2), ("", 0), ("", 0)]
            (slot, top), (_, second) = ranked[0], ranked[1]
            if top >= ASKED_MIN and top >= ASKED_SHARE * totals[utterance] and top >= ASKED_MARGIN * second:
                asked[utterance] = slot
        slot_words = {word: slot for word, slot in ANY_SLOT_WORDS.items() if slot in slots}
        return cls(slots, values, asked, slot_words, DONT_CARE_PHRASES, dict(SPELLINGS),
                   kb_entries(slots, values, facts))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def kb_entries(slots: Sequence[str], values: Mapping[str, str], facts: Iterable[tuple[str, str, str]]
               ) -> tuple[tuple[str, ...], ...]:
    """Each KB entity's value of each slot (a fact's value is a slot's by its kind in ``values``), sorted; entities
    with no slot value left out."""
    by_entity: dict[str, dict[str, str]] = defaultdict(dict)
    for entity, _, value in facts:
        if value in values:
            by_entity[entity][values[value]] = value
    return tuple(sorted({tuple(known.get(slot, "") for slot in slots) for known in by_entity.values()}))


def is_result_line(speaker: str, text: str) -> bool:
    """A KB result (or "no result") line: the API's output, which the history gives as a user line."""
    return speaker == USER and (text == NO_RESULT or parse_kb_result(text) is not None)


def api_arguments(answers: Iterable[str]) -> list[list[str]]:
    """The arguments of each API call among ``answers`` ("api_call no result" is an output, not a call)."""
    return [a.split()[1:] for a in answers if is_api_call(a) and a != NO_RESULT]


def argument_kinds(types: Mapping[str, str], calls: Sequence[Sequence[str]]) -> dict[int, Counter]:
    """Per argument position of the API ``calls``, how often each entity kind (``types``) fills it."""
    by_position: dict[int, Counter] = defaultdict(Counter)
    for arguments in calls:
        for position, word in enumerate(arguments):
            if word in types:
                by_position[position][types[word]] += 1
    return by_position


def last_index(mask: tf.Tensor, axis: int = 1) -> tf.Tensor:
    """The index of the last True along ``axis`` (-1 when none)."""
    shape = [1] * mask.shape.rank
    shape[axis] = -1
    positions = tf.reshape(tf.range(tf.shape(mask)[axis]), shape)
    return tf.reduce_max(tf.where(mask, positions, -1), axis=axis)


class DialogStateTracker(tf.Module):
    """``tracker(memory, memory_speaker, query)`` -> [B] the state words of each dialog (see the module)."""

    def __init__(self, spec: StateSpec, name: str | None = None) -> None:
        super().__init__(name=name)
        slots = list(spec.slots)
        unsafe = [p for p in spec.dont_care if not re.fullmatch(r"[a-z' ]+", p)]
        if unsafe or not spec.dont_care or not slots:
            raise ValueError(f"a tracker needs slots ({slots}) and \"don't care\" phrases of lower-case words, "
                             f"apostrophes and spaces ({list(spec.dont_care)})")
        self.slot_count = len(slots)
        self.slot_names = tf.constant(slots)[tf.newaxis, :]
        self.value_slot = lookup_table(list(spec.values), [slots.index(s) for s in spec.values.values()], -1)
        self.asked = lookup_table(list(spec.asked), [slots.index(s) for s in spec.asked.values()], -1)
        named = {w: s for w, s in spec.slot_words.items() if s in slots}
        self.slot_word = lookup_table(list(named), [slots.index(s) for s in named.values()], -1)
        spellings = dict(spec.spellings or {})
        self.spelling = lookup_table(list(spellings), list(spellings.values()), "")
        self.dont_care_pattern = rf".*\b({'|'.join(spec.dont_care)})\b.*"
        self.entries = (tf.constant(spec.entries, tf.string, shape=[len(spec.entries), len(slots)])
                        if spec.entries else None)

    def __call__(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> tf.Tensor:
        return self.describe(*self.state(memory, memory_speaker, query))

    def describe(self, state: tf.Tensor, value: tf.Tensor, call: tf.Tensor) -> tf.Tensor:
        """[B] the words of each dialog's state, call and (with KB entries) match (of :meth:`state`; not the
        values: the template model reads delexicalised text)."""
        per_slot = tf.strings.join(["state_", tf.broadcast_to(self.slot_names, tf.shape(state)), "_",
                                    tf.gather(tf.constant(STATES), state)])
        words = [per_slot, tf.strings.join(["state_call_", tf.gather(tf.constant(CALLS), call)])[:, tf.newaxis]]
        if self.entries is not None:
            match = tf.cast(self.matches(state, value), tf.int32)
            words.append(tf.strings.join(["state_match_", tf.gather(tf.constant(MATCHES), match)])[:, tf.newaxis])
        return tf.strings.reduce_join(tf.concat(words, axis=1), axis=1, separator=" ")

    def matches(self, state: tf.Tensor, value: tf.Tensor) -> tf.Tensor:
        """[B] whether some KB entry has every value the state holds (a slot unknown or "don't care" takes any)."""
        open_slot = tf.not_equal(state, 1)[:, tf.newaxis, :]  # [B, 1, S]
        same = tf.equal(value[:, tf.newaxis, :], self.entries[tf.newaxis])  # [B, E, S]
        return tf.reduce_any(tf.reduce_all(open_slot | same, axis=2), axis=1)

    def state(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor
              ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """[B, S] each slot's state (an index of STATES), [B, S] its value ("" unless a value), [B] the call's
        (an index of CALLS)."""
        slots = self.slot_count
        lines = tf.concat([memory, query[:, tf.newaxis]], axis=1)  # [B, L]: the query is the newest user line
        speaker = tf.concat([memory_speaker, tf.fill([tf.shape(query)[0], 1], USER)], axis=1)
        user, bot = tf.equal(speaker, USER), tf.equal(speaker, BOT)
        turn = user & ~(tf.equal(lines, NO_RESULT) | tf.strings.regex_full_match(lines, KB_RESULT_PATTERN))
        # The words as one flat list (with each word's line and place in it), not a [B, L, W] tensor padded to the
        # longest line: that held 11 (task 5) to 62 (task 6) times as many cells as there are words.
        shape = tf.shape(lines)
        count = shape[0] * shape[1]  # lines, row-major
        split = tf.strings.split(tf.reshape(lines, [-1]), sep=" ")
        raw = tf.concat([split.flat_values, [""]], axis=0)  # [T + 1]: the words, then "" for what no line has
        none = tf.size(split.flat_values)  # T: the index of that ""
        line = tf.cast(split.value_rowids(), tf.int32)  # [T]
        starts = tf.cast(split.row_starts(), tf.int32)  # [B * L]
        lengths = tf.reshape(tf.cast(split.row_lengths(), tf.int32), shape)  # [B, L]
        lowered = tf.strings.lower(split.flat_values)
        spelled = self.spelling.lookup(lowered)
        words = tf.where(tf.equal(spelled, ""), lowered, spelled)
        slot_of = self.value_slot.lookup(words)  # [T]
        place = tf.range(none) - tf.gather(starts, line)  # [T] each word's place in its line
        line_start = tf.reshape(starts, shape)  # [B, L] each line's first word's index
        each = tf.range(slots)[tf.newaxis, :]  # [1, S]
        # [B, L, S] the place of the slot's last word in a line (-1: none)
        last = tf.math.unsorted_segment_max(tf.where(tf.equal(slot_of[:, tf.newaxis], each), place[:, tf.newaxis], -1),
                                            line, count)
        where = tf.reshape(tf.maximum(last, -1), [shape[0], shape[1], slots])
        has_value = turn[..., tf.newaxis] & (where >= 0)
        # [B, L, S] that word's index among the words (T: none), read at the end for the value
        value_at = tf.where(where >= 0, line_start[..., tf.newaxis] + where, none)

        # "Don't care" of the slot the line names first, else of the one the bot's last question asked for.
        named = self.slot_word.lookup(words)  # [T]
        # The first slot word of a line: the smallest place * slots + slot (no slot word: the type's largest value).
        first = tf.math.unsorted_segment_min(tf.where(named >= 0, place * slots + named, tf.int32.max), line, count)
        named_slot = tf.reshape(tf.where(first < tf.int32.max, first % slots, -1), shape)  # [B, L]
        # [B, L] the bot's last line before each line (-1: none): the n-th of the dialog's bot lines, n the count of
        # bot lines before it (not a [B, L, L] mask: task 6 has 200 lines).
        before = tf.cumsum(tf.cast(bot, tf.int32), axis=1, exclusive=True)
        offset = tf.cumsum(tf.reduce_sum(tf.cast(bot, tf.int32), axis=1), exclusive=True)[:, tf.newaxis]  # [B, 1]
        bot_lines = tf.concat([tf.cast(tf.where(bot)[:, 1], tf.int32), [-1]], axis=0)  # row by row, in order
        last_bot = tf.where(before > 0, tf.gather(bot_lines, tf.maximum(offset + before - 1, 0)), -1)
        bot_asks = tf.where(bot, self.asked.lookup(lines), -1)
        asked = tf.where(last_bot >= 0, tf.gather(bot_asks, tf.maximum(last_bot, 0), batch_dims=1), -1)
        target = tf.where(named_slot >= 0, named_slot, asked)  # [B, L]
        says = turn & tf.strings.regex_full_match(tf.strings.lower(lines), self.dont_care_pattern)
        # (A line that gives the slot a value too decides it as a value: see ``state`` below.)
        dont_care = says[..., tf.newaxis] & tf.equal(target[..., tf.newaxis], each)

        decided = last_index(has_value | dont_care, axis=1)  # [B, S] the line that decides each slot
        at = tf.maximum(decided, 0)
        pick = lambda t: tf.gather(tf.transpose(t, [0, 2, 1]), at[..., tf.newaxis], batch_dims=2)[..., 0]  # noqa: E731
        state = tf.where(decided < 0, 0, tf.where(pick(has_value), 1, 2))
        value = tf.where(tf.equal(state, 1), tf.gather(tf.concat([words, [""]], axis=0), pick(value_at)), "")

        # The latest API call with arguments: "same" when it asked for each slot's value, or "R_..." for the rest.
        first_word = tf.gather(raw, tf.where(lengths > 0, line_start, none))  # [B, L]
        call = bot & tf.equal(first_word, API_CALL_PREFIX) & (lengths > 1)
        latest = last_index(call, axis=1)  # [B]
        # Words 1..S of the latest call's line ("" past its end)
        call_line = tf.maximum(latest, 0)
        start = tf.gather(line_start, call_line, batch_dims=1)[:, tf.newaxis]  # [B, 1]
        length = tf.gather(lengths, call_line, batch_dims=1)[:, tf.newaxis]
        argument = tf.range(1, slots + 1)[tf.newaxis, :]  # [1, S]
        arguments = tf.gather(raw, tf.where(argument < length, start + argument, none))  # [B, S]
        asked_for = tf.where(tf.strings.regex_full_match(arguments, "R_.*"), "", arguments)
        same = tf.reduce_all(tf.equal(asked_for, value), axis=1)
        calls = tf.where(latest < 0, 0, tf.where(same, 1, 2))
        return state, value, calls

    def calls(self, state: tf.Tensor, value: tf.Tensor, arguments: tf.Tensor) -> tf.Tensor:
        """[B, A] whether each of A API calls (``arguments`` [A, S], their words after ``api_call``) asks for the
        dialog's state: each slot's value where it has one, an ``R_`` word (any) where it has none or "don't care".

        Hybrid Code Networks fill the API call from the tracked state; so does the template ranker (see
        ``TemplateServingModule.act``)."""
        valued = tf.equal(state, 1)[:, tf.newaxis, :]  # [B, 1, S]
        # Words as indices into the arguments' distinct words (-1: none of them), so that the [B, A, S]
        # comparison is of integers, not strings (task 5: thousands of calls, compared at every served turn).
        distinct, argument_ids = tf.unique(tf.reshape(arguments, [-1]))
        argument_ids = tf.reshape(argument_ids, tf.shape(arguments))  # [A, S]
        # (An argument is never "": appended, it keeps the axis below non-empty and matches no argument.)
        matches = tf.equal(value[..., tf.newaxis], tf.concat([distinct, [""]], axis=0))  # [B, S, D + 1]
        value_ids = tf.where(tf.reduce_any(matches, axis=2), tf.argmax(tf.cast(matches, tf.int32), axis=2,
                                                                        output_type=tf.int32), -1)  # [B, S]
        same_value = tf.equal(argument_ids[tf.newaxis], value_ids[:, tf.newaxis, :])  # [B, A, S]
        open_argument = tf.strings.regex_full_match(arguments, "R_.*")[tf.newaxis]  # [1, A, S]
        return tf.reduce_all(tf.where(valued, same_value, open_argument), axis=2)

    def words(self, examples: Sequence[TurnExample], batch_size: int = 256) -> list[str]:
        """The state words of each example, a batch at a time (how training data gets what serving computes), as
        one traced graph rather than op by op."""
        return [w.decode("utf-8") for w in _batched(self.__call__, examples, batch_size)]

    def kb_matches(self, examples: Sequence[TurnExample], batch_size: int = 256) -> list[bool]:
        """Whether some KB entry has every slot value each example's state holds (:meth:`matches`), as the
        serving graph computes it."""
        return [bool(m) for m in _batched(lambda *raw: self.matches(*self.state(*raw)[:2]), examples, batch_size)]


def _batched(compute: Callable[..., tf.Tensor], examples: Sequence[TurnExample], batch_size: int) -> list:
    """``compute`` over raw (memory, speakers, query) batches of ``examples``, traced once: one output per example."""
    traced = tf.function(compute, autograph=False, reduce_retracing=True)
    out: list = []
    for start in range(0, len(examples), batch_size):
        memory, speaker, query = pad_batch(examples[start:start + batch_size])
        out += traced(tf.constant(memory, tf.string), tf.constant(speaker, tf.string),
                      tf.constant(query, tf.string)).numpy().tolist()
    return out

