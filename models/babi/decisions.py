"""What precedes the bot's decisions in DSTC2 (task 6): for each bot turn, the state of the dialog it answers (the
last API call and what it returned, the bot's previous act, the user's act) and the kind of answer the bot chose.

Task 6's held-back test is answered by another dialog manager than its training bots, and every method fails there
on three kinds of turn: no match, confirmation and slot questions (the task-6 issue's per-kind figures). This
module counts, on ``trn`` and ``dev`` alone (``trn`` by the bot's wording style, ``models.babi.folds.bot_styles``),
which context each decision follows, and which decision each context is followed by: what a model must read to
make the decision the way a different dialog manager does; and how far one fact of the state HCN reads
(``models.babi.dialog_state``: whether some KB entry has the state's slot values) decides a no match, whatever
the bot's style; and, for each held-out split (a held-out wording style, ``dev``), how many of its gold answers
no training turn says (:func:`unseen_golds`), beside the maintainers' count on the test. For analysis only: no
model reads this module.

    python -m models.babi.decisions DIR [--doc docs/babi.md]   # DIR holds task 6's trn and dev
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from data.corpus import Dialog, KBResult, Turn
from models.babi.answer_kinds import KINDS, answer_kind
from models.babi.dialog_state import DialogStateTracker, StateSpec
from models.babi.template.lexicon import EntityLexicon
from models.examples import TaskData, TurnExample, dialogs_examples

NO_RESULT = "api_call no result"
# The user's act, read from the words of the utterance, first match wins ("inform": anything else). Coarse, as the
# transcripts have no dialog acts; the patterns are the DSTC2 ontology's usual wordings.
USER_ACTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((act, re.compile(pattern)) for act, pattern in (
    ("silence", r"^<silence>$"),
    ("bye", r"\b(good ?bye|bye|thank you|thanks)\b"),
    ("reqalts", r"\b(anything else|something else|different|else|how about|what about)\b"),
    ("request", r"\b(phone|number|address|post ?code|what area|what part|price range\b.*\?|what type|whats the)\b"),
    ("dontcare", r"\b(any|dont care|don't care|doesnt matter|does not matter|whatever)\b"),
    ("affirm", r"^(yes|yeah|yea|right|correct|uh yes|yes please)\b"),
    ("negate", r"^(no|nope|wrong)\b"),
))
DECISIONS = ("no_match", "confirmation", "slot_question")


def user_act(utterance: str) -> str:
    text = utterance.strip().lower()
    return next((act for act, pattern in USER_ACTS if pattern.search(text)), "inform")


@dataclass(frozen=True)
class Context:
    """What a bot turn answers: the last API call's outcome (``none`` before any call, ``results``, ``no_result``),
    whether the call came just before (this turn reads its results), the bot's previous act and the user's act."""

    call: str
    just_called: bool
    previous: str
    user: str


def turns(dialog: Dialog) -> Iterator[tuple[Context, str]]:
    """Each bot turn of a dialog with its context and its kind (``models.babi.answer_kinds``)."""
    call, results, previous, just_called = "none", 0, "start", False
    for line in dialog.lines:
        if isinstance(line, KBResult):
            results += line.text.strip() != NO_RESULT
            continue
        if not isinstance(line, Turn):
            continue
        outcome = call if call == "none" else ("results" if results else "no_result")
        kind = answer_kind(line.bot)
        yield Context(outcome, just_called, previous, user_act(line.user)), kind
        just_called = kind == "api_call"
        if just_called:
            call, results = "called", 0
        previous = kind


def kb_matches(dialogs: Sequence[Dialog], task: TaskData) -> list[bool]:
    """Each bot turn of ``dialogs`` in order: whether some entry of ``task``'s KB (its training facts) has every
    slot value the dialog state holds, as HCN's tracker computes it with what it learns from ``task``'s ``trn``."""
    lexicon = EntityLexicon.learn(task.facts, [e.answer for e in task.split("trn")])
    tracker = DialogStateTracker(StateSpec.learn(lexicon.types, task.split("trn"), task.facts))
    return tracker.kb_matches(dialogs_examples(dialogs, 6, "analysis"))


def count(dialogs: Iterable[Dialog], matched: Sequence[bool]) -> dict[str, object]:
    """For each decision (no match, confirmation, slot question): its turns, their contexts (call outcome, user
    act, previous act), and how often the bot makes it in the contexts it follows most; and the no matches by
    whether the KB has an entry with the state's values (``matched``, one per bot turn)."""
    pairs = [pair for dialog in dialogs for pair in turns(dialog)]
    kinds = Counter(kind for _, kind in pairs)
    result: dict[str, object] = {"turns": len(pairs), "kinds": dict(kinds.most_common())}
    result["confirmation_by_dontcare"] = _split(((c.user == "dontcare", kind == "confirmation") for c, kind in pairs),
                                                "confirmation", "dontcare", "other")
    result["kb_match"] = _split(((not m, kind == "no_match") for m, (_, kind) in zip(matched, pairs, strict=True)),
                                "no_match", "none", "some")
    for decision in DECISIONS:
        chosen = [context for context, kind in pairs if kind == decision]
        after = Counter((c.call, c.just_called) for c in chosen)
        by_user = Counter(c.user for c in chosen)
        # The decision's share of the turns in each of its three most frequent (call outcome, user act) contexts:
        # how far that context decides it.
        shares = {}
        for (call, act), n in Counter((c.call, c.user) for c in chosen).most_common(3):
            total = sum(1 for c, _ in pairs if (c.call, c.user) == (call, act))
            shares[f"{call}/{act}"] = {"turns": total, "share": round(100 * n / total, 1)}
        result[decision] = {
            "turns": len(chosen),
            "after_call": {f"{call}{' (just called)' if just else ''}": n for (call, just), n in after.most_common()},
            "user_act": dict(by_user.most_common()),
            "previous_act": dict(Counter(c.previous for c in chosen).most_common(5)),
            "share_in_context": shares,
        }
    # What the bot does right after an API call that found nothing, and after one that found results.
    for outcome in ("no_result", "results"):
        result[f"just_after_{outcome}"] = dict(Counter(k for c, k in pairs if c.just_called and c.call == outcome)
                                               .most_common())
    return result


def _split(pairs: Iterable[tuple[bool, bool]], decision: str, holds: str, other: str) -> dict[str, int]:
    """Of (condition, decision made) per turn: the turns where the condition holds (keys named ``holds``) and
    where it does not (``other``), and how many of each the bot made ``decision`` in."""
    counted = Counter(pairs)
    return {f"turns_{holds}": counted[True, True] + counted[True, False], f"{decision}_{holds}": counted[True, True],
            f"turns_{other}": counted[False, True] + counted[False, False], f"{decision}_{other}": counted[False, True]}


def groups(trn: Sequence[Dialog], dev: Sequence[Dialog], styles: Sequence[int], trn_matched: Sequence[bool],
           dev_matched: Sequence[bool]) -> Iterator[tuple[str, list, list]]:
    """The groups counted: ``trn`` whole and by wording style (0: none shown), and ``dev``; each with its bot
    turns' KB matches (of ``trn_matched`` and ``dev_matched``, one per bot turn of ``trn`` and ``dev``)."""
    per_dialog, at = [], 0
    for dialog in trn:
        per_dialog.append(list(trn_matched[at:at + len(dialog.turns)]))
        at += len(dialog.turns)
    if at != len(trn_matched):  # one match per bot turn, or the cut above gives each dialog another's
        raise ValueError(f"{len(trn_matched)} KB matches for the {at} bot turns of trn")
    yield "trn", list(trn), list(trn_matched)
    for style in sorted(set(styles)):
        chosen = [i for i, s in enumerate(styles) if s == style]
        yield f"trn style {style}", [trn[i] for i in chosen], [m for i in chosen for m in per_dialog[i]]
    yield "dev", list(dev), list(dev_matched)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}" if whole else "-"


def format_markdown(counted: Sequence[dict]) -> str:
    """The counts as the table docs/babi.md shows: per group, each decision's share of the bot turns and the context
    it follows most, and what the bot does right after a call that found nothing."""
    lines = ["| group | dialogs | bot turns | no match % | of which with no call yet / just after a call that found "
             "nothing | confirmation % | of which after a no match | slot question % | of which before any call | "
             "right after a call that found nothing: no match / offer / attribute | no match where the KB has nothing "
             "for the state / has some (% of those turns) | confirmation after the user says \"don't care\" / "
             "anything else (% of those turns) |",
             "| --- |" + " --- |" * 11]
    for group in counted:
        turns, no_match, confirm = group["turns"], group["no_match"], group["confirmation"]
        slot = group["slot_question"]
        after, kb, dc = group["just_after_no_result"], group["kb_match"], group["confirmation_by_dontcare"]
        called_nothing = sum(after.values())
        lines.append(
            f"| {group['group']} | {group['dialogs']} | {turns} | {_percent(no_match['turns'], turns)} | "
            f"{_percent(no_match['after_call'].get('none', 0), no_match['turns'])} / "
            f"{_percent(no_match['after_call'].get('no_result (just called)', 0), no_match['turns'])} | "
            f"{_percent(confirm['turns'], turns)} | "
            f"{_percent(confirm['previous_act'].get('no_match', 0), confirm['turns'])} | "
            f"{_percent(slot['turns'], turns)} | {_percent(slot['after_call'].get('none', 0), slot['turns'])} | "
            + " / ".join(_percent(after.get(kind, 0), called_nothing) for kind in ("no_match", "offer", "attribute"))
            + f" (of {called_nothing}) | {_percent(kb['no_match_none'], kb['turns_none'])} / "
            f"{_percent(kb['no_match_some'], kb['turns_some'])} (of {kb['turns_none']} / {kb['turns_some']}) | "
            f"{_percent(dc['confirmation_dontcare'], dc['turns_dontcare'])} / "
            f"{_percent(dc['confirmation_other'], dc['turns_other'])} (of {dc['turns_dontcare']} / "
            f"{dc['turns_other']}) |")
    return "\n".join(lines)


def unseen_golds(training: Iterable[TurnExample], held: Iterable[TurnExample]) -> dict[str, tuple[int, int]]:
    """Per answer kind (and ``all``): how many of ``held``'s turns have a gold answer that no turn of ``training``
    has, and how many turns there are. A ranker learns the training golds: an unseen one is a wording it was never
    taught to say, whatever it decides."""
    seen = {example.answer for example in training}
    unseen, total = Counter(), Counter()
    for example in held:
        for key in (answer_kind(example.answer), "all"):
            total[key] += 1
            unseen[key] += example.answer not in seen
    return {key: (unseen[key], total[key]) for key in total}


def format_unseen(columns: Sequence[tuple[str, dict[str, tuple[int, int]]]], test: dict[str, float]) -> str:
    """The unseen golds by kind as docs/babi.md shows them: a column per held-out split (% of the kind's turns, and
    how many turns), then the held-back test's shares (``test``, the maintainers' count)."""
    kinds = [k for k in (*KINDS, "all") if any(k in counted for _, counted in columns) or k in test]
    lines = ["| kind | " + " | ".join(name for name, _ in columns) + " | held-back test (maintainers) |",
             "| --- |" + " --- |" * (len(columns) + 1)]
    for kind in kinds:
        cells = [f"{_percent(*counted[kind])} (of {counted[kind][1]})" if kind in counted else "-"
                 for _, counted in columns]
        cells.append(f"{test[kind]:.1f}" if kind in test else "-")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


START, END = "<!-- TASK 6 DECISIONS -->", "<!-- /TASK 6 DECISIONS -->"
UNSEEN_START, UNSEEN_END = "<!-- TASK 6 UNSEEN GOLDS -->", "<!-- /TASK 6 UNSEEN GOLDS -->"


def main(argv: Sequence[str] | None = None) -> None:
    """Count task 6's trn and dev (DIRECTORY); print one JSON line per group, and with ``--doc`` write the table
    between its markers there."""
    import argparse

    from data.layout import discover
    from models.babi.folds import bot_runs, bot_styles
    from models.babi.paper import HELD_BACK_TASK6_UNSEEN
    from models.doc_blocks import write_block

    parser = argparse.ArgumentParser(prog="python -m models.babi.decisions", description=main.__doc__)
    parser.add_argument("directory", help="a corpus directory holding task 6's trn and dev")
    parser.add_argument("--doc", help="a document whose task-6 decisions block (between its markers) is rewritten")
    args = parser.parse_args(argv)
    task = TaskData.load(discover(args.directory)[6], splits=("trn", "dev"))
    trn, dev = task.dialogs["trn"], task.dialogs["dev"]
    counted = [{"group": name, "dialogs": len(dialogs), **count(dialogs, matched)} for name, dialogs, matched
               in groups(trn, dev, bot_styles(task), kb_matches(trn, task), kb_matches(dev, task))]
    for group in counted:
        print(json.dumps(group))
    # Each held-out split beside what it is trained on: a (new bot) run's held-out style against the other styles
    # (its trn and dev), and dev against trn.
    unseen = [(run.name, unseen_golds([*run.task.split("trn"), *run.task.split("dev")], run.task.split("tst")))
              for run in bot_runs(task)]
    unseen.append(("dev (against trn)", unseen_golds(task.split("trn"), task.split("dev"))))
    print(json.dumps({"unseen_golds": dict(unseen)}))
    if args.doc:
        source = ("Counted by `python -m models.babi.decisions DIR --doc docs/babi.md` on the public task 6 `trn` and "
                  "`dev` (percentages of each group's bot turns, then of each decision's turns).")
        write_block(args.doc, START, END, format_markdown(counted) + "\n\n" + source)
        source = ("Counted by the same command: % of each kind's turns whose gold answer no training turn of the "
                  "split has (the turns counted in parentheses); the test's column is the maintainers' count against "
                  "`trn` and `dev` (`models/babi/paper.py`).")
        write_block(args.doc, UNSEEN_START, UNSEEN_END,
                    format_unseen(unseen, HELD_BACK_TASK6_UNSEEN) + "\n\n" + source)


if __name__ == "__main__":
    main()
