"""Answer an API call from a KB file, as the dialogs' API outputs do (used by ``dialog chat``).

An entity matches when every argument of the call is one of its fact values ("dontcare" and "any" match
anything); its facts come back in the KB file's order, as ``entity R_attribute value`` lines. No match gives the
single line ``api_call no result``, as task 6's dialogs show it.
"""

from __future__ import annotations

from collections.abc import Sequence

from data.corpus import API_CALL_PREFIX, NO_RESULT, KBFact, is_api_call

WILDCARDS = frozenset({"dontcare", "any"})


def lookup(facts: Sequence[KBFact], call: str) -> list[str]:
    """The API output lines for ``call`` (``api_call arg1 arg2 ...``)."""
    if not is_api_call(call):
        raise ValueError(f"not an API call: {call!r} (expected it to start with {API_CALL_PREFIX!r})")
    wanted = [arg for arg in call.split()[1:] if arg.lower() not in WILDCARDS]
    by_entity: dict[str, list[KBFact]] = {}
    for fact in facts:
        by_entity.setdefault(fact.entity, []).append(fact)
    lines = [fact.as_result_text() for entity_facts in by_entity.values()
             if set(wanted) <= {fact.value for fact in entity_facts} for fact in entity_facts]
    return lines or [NO_RESULT]
