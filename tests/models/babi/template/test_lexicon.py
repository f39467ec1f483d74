"""The entity lexicon and the delexicalised examples the template model reads."""

from __future__ import annotations

from models.babi.template.lexicon import template_example
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


def test_lexicon_types_come_from_kb_results_and_api_call_positions(task6) -> None:
    _, _, lexicon = task6
    assert lexicon.types["the_oak"] == "name" and lexicon.types["thai"] == "cuisine"
    assert lexicon.types["north"] == "location" and lexicon.types["the_oak_phone"] == "phone"
    assert lexicon.types["korean"] == "cuisine"  # only ever an API-call argument (no result)
    assert "4" not in lexicon.types  # ratings stay words
    template = lexicon.delexicalise("The phone number of the_oak is the_oak_phone")
    assert template == "The phone number of <name> is <phone>"


def test_template_example_keeps_only_rating_lines_of_results(task6) -> None:
    _, trn, lexicon = task6
    example = template_example(lexicon, trn[3])  # the offer after the API call
    assert example.memory[-2:] == ("<name> R_rating 4", "<name> R_rating 9")
    assert example.answer == "<name> is a nice restaurant in the <location> of town serving <cuisine> food"
