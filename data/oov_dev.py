"""An out-of-vocabulary dev set made from ``dev`` alone: its dialogs with their KB entities swapped for KB entities
that no training dialog holds.

Half of Table 2 (the ``tst-OOV`` rows) asks how a model answers about restaurants, cuisines and locations it never
saw, and ``dev`` cannot tell: every dev dialog talks about entities training also holds, so a setting or an epoch
chosen on ``dev`` is blind to the OOV rows (task 1 with match type: dev could not tell apart settings that the
OOV test set told apart). The public release builds its OOV test sets from a second KB that the KB file
lists; this module builds the same kind of set from ``dev``, so a model can be chosen on it without reading a test
file:

- a *categorical* attribute (one value shared by several entities: cuisine, location, price, rating, party size)
  maps each value that training holds to one it does not hold, in sorted order (cycling when there are fewer of
  them); an attribute with no unseen value (price, rating, party size: both KBs share them) stays as it is;
- an entity (restaurant) with a mapped attribute maps to the unseen entity that agrees with its mapped attributes
  most (the first by name on a tie) among those no other entity took (while any is left: the restaurants of one
  task-3 dialog share cuisine, location and price, and must stay apart), and its *own* values (phone, address:
  one entity each) to that entity's;
- every word of every line is then replaced through that map. A dialog whose gold answers are not all candidates
  after the swap is left out and counted (an API call over a pair of values no candidate names, for one), and so is
  a dialog in which two of its words become one (two restaurants swapped for the same one).

Only the KB facts, the training dialogs' words and the candidates are read: nothing our generator alone knows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from data.corpus import Dialog, KBResult, Turn
from data.facts import Fact


@dataclass(frozen=True)
class OovDev:
    """The swapped dialogs, how many dev dialogs were left out, and the word map used."""

    dialogs: list[Dialog]
    left_out: int
    words: dict[str, str] = field(default_factory=dict)


def entity_word_map(facts: Iterable[Fact], known_words: set[str]) -> dict[str, str]:
    """word -> unseen word of the same kind (see the module's docstring); empty when nothing is unseen."""
    attributes: dict[str, dict[str, str]] = defaultdict(dict)  # entity -> attribute -> value
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)  # (attribute, value) -> entities
    for entity, attribute, raw in facts:
        value = raw.strip()
        if " " in value or not value:
            continue  # several words: never one token of an utterance
        attributes[entity].setdefault(attribute, value)
        owners[(attribute, value)].add(entity)
    values: dict[str, set[str]] = defaultdict(set)
    for attribute, value in owners:
        values[attribute].add(value)
    categorical = {a for a, vs in values.items() if any(len(owners[(a, v)]) > 1 for v in vs)}
    words: dict[str, str] = {}
    for attribute in sorted(categorical):
        seen = sorted(v for v in values[attribute] if v in known_words)
        unseen = sorted(v for v in values[attribute] if v not in known_words)
        if unseen:
            words.update({v: unseen[i % len(unseen)] for i, v in enumerate(seen) if v not in words})
    targets = sorted(e for e in attributes if e not in known_words)
    target_items = [set(attributes[t].items()) for t in targets]
    free = set(range(len(targets)))  # targets no entity has taken yet
    for entity in sorted(attributes):
        own = attributes[entity]
        if not targets or not any(v in words for a, v in own.items() if a in categorical):
            continue  # none of its attributes is swapped (or nothing unseen to swap it for)
        wanted = {(a, words.get(v, v)) for a, v in own.items() if a in categorical}
        chosen = max(free or range(len(targets)), key=lambda i: (len(wanted & target_items[i]), -i))
        free.discard(chosen)
        target = targets[chosen]
        words[entity] = target
        for attribute, value in own.items():
            if attribute not in categorical and attribute in attributes[target]:
                words.setdefault(value, attributes[target][attribute])
    return words


def _swap(text: str, words: dict[str, str]) -> str:
    return " ".join(words.get(word, word) for word in text.split(" "))


def swap_dialog(dialog: Dialog, words: dict[str, str]) -> Dialog:
    """The dialog with every word of its lines passed through ``words`` (spacing and line IDs kept)."""
    lines = tuple(Turn(line.id, _swap(line.user, words), _swap(line.bot, words)) if isinstance(line, Turn)
                  else KBResult(line.id, _swap(line.text, words)) for line in dialog.lines)
    return Dialog(lines, dialog.blank_lines_after)


def oov_dev(dev: Sequence[Dialog], trn: Sequence[Dialog], facts: Iterable[Fact], candidates: Iterable[str]) -> OovDev:
    """``dev`` with its KB entities swapped for ones the ``trn`` dialogs never hold (see the module's docstring)."""
    known = {word for dialog in trn for text in dialog.texts for word in text.split()}
    words = entity_word_map(facts, known)
    if not words:
        return OovDev([], len(dev), words)
    answers = set(candidates)
    kept = []
    for dialog in dev:
        said = {word for text in dialog.texts for word in text.split() if word in words}
        if len({words[word] for word in said}) < len(said):
            continue  # two of its entities became one
        swapped = swap_dialog(dialog, words)
        if all(turn.bot in answers for turn in swapped.turns):
            kept.append(swapped)
    return OovDev(kept, len(dev) - len(kept), words)
