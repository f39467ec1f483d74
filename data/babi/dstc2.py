"""Convert the DSTC2 release into dialog-bAbI task 6, as section 3.2 of Bordes et al. (2017) describes.

The DSTC2 release (Henderson et al., 2014) holds one directory per call with ``log.json`` (the system's turns:
``output.transcript`` and ``output.dialog-acts``) and ``label.json`` (the user's turns: ``transcription`` and the
annotated ``goal-labels``), file lists ``dstc2_{train,dev,test}.flist`` naming the calls of each split, and
``ontology_dstc2.json``. The conversion follows the conventions of the public task-6 files:

* one line ``user<TAB>bot`` per exchange: ``<SILENCE>`` with the system's welcome (in the public files' fixed
  wording), then each user transcription
  (lower-cased) with the system's next output, and the last user turn with `` you are welcome``;
* before a system turn that offers a restaurant or says none matches (acts ``offer``/``canthelp``), when the
  user's goal differs from the last API call's, the user turn gets ``api_call <cuisine> <location> <price>`` built
  from the goal labels (``R_cuisine``/``R_location``/``R_price`` for a slot the user left open or does not care
  about), then the KB results, then ``<SILENCE>`` with the system's output;
* each matching restaurant gives seven result lines (post code, cuisine, location, phone, address, price,
  rating) or ``api_call no result``; the restaurants the system goes on to offer get the highest ratings, in
  the order it offers them, so that the offer is predictable from the results;
* multi-word names and cuisines are joined with ``_``; addresses, phone numbers and post codes the system says
  become ``<name>_address``, ``<name>_phone``, ``<name>_post_code``.

The files read (calls, file lists, ontology) hold no restaurant database, so the KB is read off the system's own
dialog acts: a restaurant's cuisine, area and price range are what the system informed about it when offering it
(the most frequent value over all calls). Restaurants the system never described fully stay out of the KB.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from data import babi_format
from data.atomic import one_writer, staged_files
from data.babi_format import FormatError, read_text
from data.corpus import NO_RESULT, SILENCE, CandidateFile, Dialog, DialogFile
from data.layout import dialog_file_name, task_candidates_name
from data.progress import bar
from data.validate import validate_corpus

TASK = 6
SPLITS = {"trn": "train", "dev": "dev", "tst": "test"}  # our split -> DSTC2 file list suffix
GOODBYE = " you are welcome"
# The public files write the system's welcome (act ``welcomemsg``) as one fixed, tokenised sentence.
WELCOME = ("Hello , welcome to the Cambridge restaurant system . You can ask for restaurants by area , price range "
           "or food type . How may I help you ?")
GOAL_SLOTS = (("food", "R_cuisine"), ("area", "R_location"), ("pricerange", "R_price"))
DONT_CARE = "dontcare"
DB_ACTS = {"offer", "canthelp", "canthelp.exception"}
SPOKEN_VALUES = (("addr", "address"), ("phone", "phone"), ("postcode", "post_code"))
RESULT_ORDER = ("post_code", "cuisine", "location", "phone", "address", "price", "rating")
MAX_RATING = 10


class Dstc2Error(ValueError):
    """A call of the DSTC2 release that cannot be converted, with the path that is wrong."""

    def __init__(self, path: str | Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)


@dataclass(frozen=True)
class SystemTurn:
    transcript: str
    acts: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (act, ((slot, value), ...))

    def act_names(self) -> set[str]:
        return {act for act, _ in self.acts}

    def slot_values(self, slot: str) -> list[str]:
        return [value for _, slots in self.acts for name, value in slots if name == slot]


@dataclass(frozen=True)
class UserTurn:
    transcription: str
    goal: dict[str, str]


@dataclass(frozen=True)
class Call:
    """One DSTC2 call: system turn i is followed by user turn i."""

    session_id: str
    path: str
    system: tuple[SystemTurn, ...]
    user: tuple[UserTurn, ...]


# ---------------------------------------------------------------------------------------------- reading


def _load_json(path: Path) -> dict:
    if not path.is_file():
        raise Dstc2Error(path, "missing file")
    try:
        data = json.loads(read_text(path))
    except FormatError as error:  # not UTF-8, not a regular file, a line past the bound
        raise Dstc2Error(path, error.message) from None
    except json.JSONDecodeError as error:
        raise Dstc2Error(path, f"not valid JSON: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise Dstc2Error(path, "expected an object with a 'turns' list")
    return data


def _field(turn: object, keys: Sequence[str], path: Path, index: int, kind: type) -> object:
    value = turn
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise Dstc2Error(path, f"turn {index}: missing field {'.'.join(keys)!r}")
        value = value[key]
    if not isinstance(value, kind):
        raise Dstc2Error(path, f"turn {index}: field {'.'.join(keys)!r} should be a {kind.__name__}")
    return value


def _acts(raw: list, path: Path, index: int) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    acts = []
    for act in raw:
        if not isinstance(act, dict) or not isinstance(act.get("act"), str):
            raise Dstc2Error(path, f"turn {index}: a dialog act without an 'act' name")
        slots = []
        if not isinstance(act.get("slots", []), list):
            raise Dstc2Error(path, f"turn {index}: the slots of act {act['act']!r} are not a list of [slot, value]")
        for pair in act.get("slots", []):
            if not isinstance(pair, list) or len(pair) != 2:
                raise Dstc2Error(path, f"turn {index}: slot {pair!r} of act {act['act']!r} is not [slot, value]")
            slots.append((str(pair[0]), str(pair[1]).lower()))
        acts.append((act["act"], tuple(slots)))
    return tuple(acts)


def read_call(directory: str | Path) -> Call:
    """One call directory; raises :class:`Dstc2Error` naming the file when it is missing or malformed."""
    directory = Path(directory)
    log_path, label_path = directory / "log.json", directory / "label.json"
    log, label = _load_json(log_path), _load_json(label_path)
    if len(log["turns"]) != len(label["turns"]):
        raise Dstc2Error(directory, f"log.json has {len(log['turns'])} turns but label.json has "
                                    f"{len(label['turns'])}")
    if not log["turns"]:
        raise Dstc2Error(log_path, "a call without turns")
    system = []
    for index, turn in enumerate(log["turns"]):
        transcript = _field(turn, ("output", "transcript"), log_path, index, str)
        raw_acts = _field(turn, ("output", "dialog-acts"), log_path, index, list)
        system.append(SystemTurn(" ".join(str(transcript).split()), _acts(raw_acts, log_path, index)))
    user = []
    for index, turn in enumerate(label["turns"]):
        transcription = _field(turn, ("transcription",), label_path, index, str)
        goal = _field(turn, ("goal-labels",), label_path, index, dict)
        user.append(UserTurn(" ".join(str(transcription).lower().split()),
                             {str(k): str(v).lower() for k, v in goal.items()}))
    session = str(log.get("session-id") or label.get("session-id") or directory.name)
    return Call(session, str(directory), tuple(system), tuple(user))


def _find(root: Path, name: str) -> Path | None:
    for candidate in (root / "scripts" / "config" / name, root / "config" / name, root / name):
        if candidate.is_file():
            return candidate
    found = sorted(root.rglob(name))
    return found[0] if found else None


def split_calls(root: str | Path) -> dict[str, list[Path]]:
    """The call directories of each split (``trn``, ``dev``, ``tst``) named by the release's file lists."""
    root = Path(root)
    splits: dict[str, list[Path]] = {}
    for split, suffix in SPLITS.items():
        flist = _find(root, f"dstc2_{suffix}.flist")
        if flist is None:
            continue
        calls = []
        try:
            text = read_text(flist)
        except FormatError as error:
            raise Dstc2Error(flist, error.message) from None
        for line in text.splitlines():
            entry = line.strip()
            if not entry:
                continue
            options = [root / "data" / entry, root / entry, flist.parent / entry]
            calls.append(next((option for option in options if option.is_dir()), options[0]))
        splits[split] = calls
    if not splits:
        raise Dstc2Error(root, "no DSTC2 file list (dstc2_train.flist, dstc2_dev.flist, dstc2_test.flist) found")
    return splits


def read_ontology(root: str | Path) -> dict[str, list[str]]:
    """Informable slot values of ``ontology_dstc2.json`` (empty when the release has none)."""
    path = _find(Path(root), "ontology_dstc2.json")
    if path is None:
        return {}
    try:
        ontology = json.loads(read_text(path))
    except FormatError as error:
        raise Dstc2Error(path, error.message) from None
    except json.JSONDecodeError as error:
        raise Dstc2Error(path, f"not valid JSON: {error}") from error
    informable = ontology.get("informable", {}) if isinstance(ontology, dict) else None
    if not isinstance(informable, dict) or not all(isinstance(v, list) for v in informable.values()):
        raise Dstc2Error(path, "expected an object whose 'informable' maps each slot to a list of values")
    return {slot: [str(v).lower() for v in values] for slot, values in informable.items()}


# ---------------------------------------------------------------------------------------------- the KB


@dataclass(frozen=True)
class OfferedRestaurant:
    """A restaurant as the DSTC2 system offered it: the release has no database, only what the system said."""

    name: str
    cuisine: str
    location: str
    price: str


def build_kb(calls: Iterable[Call]) -> list[OfferedRestaurant]:
    """Restaurants with the cuisine, area and price range the system informed when it offered them."""
    seen: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for call in calls:
        for turn in call.system:
            names = turn.slot_values("name")
            if "offer" not in turn.act_names() or len(set(names)) != 1:
                continue
            for slot in ("food", "area", "pricerange"):
                for value in turn.slot_values(slot):
                    if value != DONT_CARE:
                        seen[names[0]][slot][value] += 1
    kb = []
    for name, slots in sorted(seen.items()):
        if all(slots[slot] for slot in ("food", "area", "pricerange")):
            kb.append(OfferedRestaurant(name, *(slots[s].most_common(1)[0][0] for s in ("food", "area", "pricerange"))))
    return kb


# ---------------------------------------------------------------------------------------------- conversion


def entity_token(value: str) -> str:
    """A multi-word KB value as one token, as the public files write them."""
    return "_".join(value.split())


@dataclass
class Converter:
    """Turns calls into task-6 dialogs against one KB; ``seed`` fixes the ratings of non-offered results."""

    kb: Sequence[OfferedRestaurant]
    extra_phrases: Iterable[str] = ()
    seed: int = 0
    _pattern: re.Pattern | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        phrases = {p for r in self.kb for p in (r.name, r.cuisine)} | set(self.extra_phrases)
        multi = sorted((p for p in phrases if len(p.split()) > 1), key=len, reverse=True)
        if multi:
            self._pattern = re.compile(r"(?<![\w'])(" + "|".join(re.escape(p) for p in multi) + r")(?![\w'])")

    def join_entities(self, text: str) -> str:
        return self._pattern.sub(lambda m: entity_token(m.group(1)), text) if self._pattern else text

    def _api_call(self, goal: dict[str, str]) -> tuple[str, tuple[str | None, ...]]:
        values = tuple(None if goal.get(slot, DONT_CARE) == DONT_CARE else goal[slot] for slot, _ in GOAL_SLOTS)
        words = [entity_token(v) if v else placeholder for v, (_, placeholder) in zip(values, GOAL_SLOTS, strict=True)]
        return "api_call " + " ".join(words), values

    def _results(self, constraint: tuple[str | None, ...], offered: Sequence[str], rng: random.Random) -> list[str]:
        matches = [r for r in self.kb if all(v is None or v == got for v, got in
                                             zip(constraint, (r.cuisine, r.location, r.price), strict=True))]
        if not matches:
            return [NO_RESULT]
        ranked = [name for name in dict.fromkeys(offered) if any(r.name == name for r in matches)]
        ratings = {name: MAX_RATING - i for i, name in enumerate(ranked[:MAX_RATING])}
        floor = min(ratings.values(), default=MAX_RATING + 1)
        lines = []
        for restaurant in matches:
            rating = ratings.get(restaurant.name, rng.randrange(max(floor, 1)))
            name = entity_token(restaurant.name)
            values = {"post_code": f"{name}_post_code", "cuisine": entity_token(restaurant.cuisine),
                      "location": restaurant.location, "phone": f"{name}_phone", "address": f"{name}_address",
                      "price": restaurant.price, "rating": str(rating)}
            lines.extend(f"{name} R_{attribute} {values[attribute]}" for attribute in RESULT_ORDER)
        return lines

    def _system_text(self, turn: SystemTurn, current: str | None) -> str:
        if turn.act_names() == {"welcomemsg"}:
            return WELCOME
        names = turn.slot_values("name")
        subject = names[0] if names else current
        text = turn.transcript
        if subject is not None:
            for slot, suffix in SPOKEN_VALUES:
                for value in turn.slot_values(slot):
                    text = re.sub(re.escape(value), f"{entity_token(subject)}_{suffix}", text, flags=re.IGNORECASE)
        return self.join_entities(text)

    def convert(self, call: Call) -> Dialog:
        rng = random.Random(f"{self.seed}:{call.session_id}")
        items: list[tuple[str, str] | str] = [(SILENCE, self._system_text(call.system[0], None))]
        last_call: str | None = None
        current: str | None = call.system[0].slot_values("name")[0] if call.system[0].slot_values("name") else None
        for index, user_turn in enumerate(call.user):
            user = self.join_entities(user_turn.transcription) or SILENCE
            if index + 1 == len(call.system):
                items.append((user, GOODBYE))
                break
            system = call.system[index + 1]
            api_call, constraint = self._api_call(user_turn.goal)
            if system.act_names() & DB_ACTS and api_call != last_call:
                offered = [n for turn in call.system[index + 1:] for n in turn.slot_values("name")
                           if "offer" in turn.act_names()]
                items.append((user, api_call))
                items.extend(self._results(constraint, offered, rng))
                user, last_call = SILENCE, api_call
            items.append((user, self._system_text(system, current)))
            if system.slot_values("name"):
                current = system.slot_values("name")[0]
        return Dialog.build(items)


# ---------------------------------------------------------------------------------------------- the command


@dataclass
class ConversionReport:
    dialogs: dict[str, int]
    skipped: list[str]
    restaurants: int
    candidates: int
    written: list[Path]


def convert_release(src: str | Path, out: str | Path, *, skip_bad: bool = False, seed: int = 0) -> ConversionReport:
    """Convert a DSTC2 release directory into task 6 files under ``out``.

    Every call is read before anything is written; a malformed call raises :class:`Dstc2Error` unless
    ``skip_bad``, in which case it is left out and listed in the report. Files are written atomically.
    """
    calls: dict[str, list[Call]] = {}
    skipped: list[str] = []
    listed = split_calls(src)
    with bar(sum(map(len, listed.values())), "reading calls", "call") as progress:
        for split, directories in listed.items():
            calls[split] = []
            for directory in directories:
                try:
                    calls[split].append(read_call(directory))
                except Dstc2Error as error:
                    if not skip_bad:
                        raise
                    skipped.append(str(error))
                progress.update()
    empty = [split for split, read in calls.items() if not read]
    if empty:  # files of no dialog would replace a good conversion in ``out`` with nothing
        raise Dstc2Error(src, f"no call of {', '.join(empty)} could be read"
                         + (f" ({len(skipped)} skipped as malformed)" if skipped else "") + "; nothing written")
    ontology = read_ontology(src)
    kb = build_kb(call for split_calls_ in calls.values() for call in split_calls_)
    converter = Converter(kb, [*ontology.get("food", []), *ontology.get("name", [])], seed)
    out = Path(out)
    candidates: dict[str, None] = {}
    files: dict[Path, DialogFile] = {}
    for split, split_calls_ in calls.items():
        dialogs = [converter.convert(call) for call in split_calls_]
        for dialog in dialogs:
            candidates.update((turn.bot, None) for turn in dialog.turns)
        files[out / dialog_file_name(TASK, split)] = DialogFile(dialogs)
    files[out / task_candidates_name(TASK)] = CandidateFile(list(candidates))
    written = _write_validated(src, out, files)
    return ConversionReport({split: len(c) for split, c in calls.items()}, skipped, len(kb), len(candidates),
                            written)


def _write_validated(src: str | Path, out: Path, files: dict[Path, DialogFile | CandidateFile]) -> list[Path]:
    """Write ``files`` into a staging directory in ``out``, check them as ``dialog validate`` would, and only
    then move them to their names: a conversion that validate would reject (a whitespace-only transcript made a
    candidate of '1 ', say) raises Dstc2Error and leaves ``out`` as it was. One converter at a time in ``out``."""
    with one_writer(out), staged_files(out) as staging:
        for path, content in files.items():
            if isinstance(content, CandidateFile):
                babi_format.write_candidates(Path(staging) / path.name, content)
            else:
                babi_format.write_dialogs(Path(staging) / path.name, content)
        report = validate_corpus(staging, partial=True)
        if not report.passes():  # raised inside: staged_files renames nothing
            problems = "; ".join(str(p).replace(str(staging), str(out)) for p in report.errors[:3])
            raise Dstc2Error(src, f"the conversion would not pass validation ({len(report.errors)} errors: "
                                  f"{problems}); nothing written")
    return list(files)
