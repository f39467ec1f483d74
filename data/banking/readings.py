"""The generator's readings of what the paper leaves open, each a setting so that a finding the tables do not
reproduce can be tested against the detail the audit (docs/banking-audit.md) blames for it.

The defaults are the readings the generator was built on; another value regenerates the corpus with the other
reading. The labels sidecar names the readings that differ from the defaults, so that ``dialog benchmark --seeds``
regenerates its other seeds with the same ones. This module is shared by the generator and the labels' readers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from data.settings import named_settings

REORDERING = ("last_slot", "every_request")
ANOTHER_SLOT = ("partner_for_account", "any_later_slot")
NEW_API = ("separate_checks", "one_call")
MULTIPLE_SCORED = ("every", "second")


@dataclass(frozen=True)
class Readings:
    """One reading per open detail (audit rows in brackets).

    - ``declines``: the share of "would you like to change it?" a user answers no [4]; 0 is the generator before the
      audit, where the turn after a change question was always "yes".
    - ``reordering``: which bot turn of a reordered flow is scored [15]: ``last_slot``, the request of the last
      missing slot once every other is valid (the paper's words); ``every_request``, every request that training's
      order would not make there.
    - ``another_slot``: what the user does [16]: ``partner_for_account``, asked for the account, names the
      partner; ``any_later_slot``, asked for any slot with later ones, names one of those.
    - ``new_api``: how the bot checks the two slots of a new-API opening [14]: ``separate_checks``, one check per
      slot as in training; ``one_call``, one check of both (``api_call check_partner_amount ...``), an API call
      no training dialog makes.
    - ``multiple_scored``: which occurrences a multiple-OOP dialog (Table 9) scores [18]: ``every`` or the
      ``second`` alone.
    """

    declines: float = 0.2
    reordering: str = REORDERING[0]
    another_slot: str = ANOTHER_SLOT[0]
    new_api: str = NEW_API[0]
    multiple_scored: str = MULTIPLE_SCORED[0]

    def __post_init__(self) -> None:
        problem = readings_problem(asdict(self))
        if problem:
            raise ValueError(problem)

    def changed(self) -> dict[str, Any]:
        """The readings that differ from the defaults (what a label records)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}

    @classmethod
    def parse(cls, settings: list[str] | tuple[str, ...]) -> Readings:
        """``NAME=VALUE`` settings over the defaults; a bad name or value is a ``ValueError`` naming it."""
        values: dict[str, Any] = {}
        for setting, name, text in named_settings(settings, [f.name for f in fields(cls)], "reading"):
            if name in values:
                raise ValueError(f"reading {name} given twice")
            try:
                values[name] = float(text) if name == "declines" else text
            except ValueError:
                raise ValueError(f"reading {setting!r}: {text!r} is not a number") from None
        return cls(**values)


CHOICES = {"reordering": REORDERING, "another_slot": ANOTHER_SLOT, "new_api": NEW_API,
           "multiple_scored": MULTIPLE_SCORED}


def readings_problem(values: Any) -> str | None:
    """What is wrong with a mapping of readings (a label's ``readings``, or the dataclass's), or None."""
    if not isinstance(values, dict):
        return "expected an object of readings"
    names = [f.name for f in fields(Readings)]
    for name, value in values.items():
        if name not in names:
            return f"reading {name!r} is not one of {', '.join(names)}"
        if name == "declines":
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                return f"reading declines is {value!r}: expected a share between 0 and 1"
        elif value not in CHOICES[name]:
            return f"reading {name} is {value!r}: expected one of {', '.join(CHOICES[name])}"
    return None


DEFAULT = Readings()  # the readings the generator was built on
