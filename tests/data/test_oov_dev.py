"""The OOV dev set: dev dialogs with their KB entities swapped for ones no training dialog holds."""

from __future__ import annotations

from data.babi_format import parse_dialogs, parse_kb
from data.oov_dev import entity_word_map, oov_dev, swap_dialog

# Two "KBs" as the public KB file lists them: cuisines and locations apart, prices and party sizes shared.
KB = parse_kb("".join(
    f"1 resto_{location}_{price}_{cuisine} R_{attribute}\t{value}\n"
    for cuisine, location in (("italian", "rome"), ("thai", "paris"), ("korean", "seoul"), ("french", "tokyo"))
    for price in ("cheap", "expensive")
    for attribute, value in (("cuisine", cuisine), ("location", location), ("price", price), ("number", "two"),
                             ("phone", f"resto_{location}_{price}_{cuisine}_phone"))))
FACTS = [(f.entity, f.attribute, f.value) for f in KB.facts]
TRN = parse_dialogs("1 i love italian food in rome\tok let me look into some options for you\n"
                    "2 <SILENCE>\tapi_call italian rome two cheap\n"
                    "3 resto_rome_cheap_italian R_phone resto_rome_cheap_italian_phone\n"
                    "4 and thai in paris\tapi_call thai paris two expensive\n\n").dialogs
DEV = parse_dialogs("1 thai  food in paris please\tok let me look into some options for you\n"
                    "2 <SILENCE>\tapi_call thai paris two expensive\n"
                    "3 resto_paris_expensive_thai R_phone resto_paris_expensive_thai_phone\n"
                    "4 the phone please\there it is resto_paris_expensive_thai_phone\n\n").dialogs
CANDIDATES = ["ok let me look into some options for you",
              *(f"api_call {c} {loc} two {p}" for c, loc in (("korean", "seoul"), ("french", "tokyo"))
                for p in ("cheap", "expensive")),
              *(f"here it is resto_{loc}_{p}_{c}_phone" for c, loc in (("korean", "seoul"), ("french", "tokyo"))
                for p in ("cheap", "expensive"))]


def test_known_entities_map_to_unseen_ones_of_the_same_kind_and_restaurant() -> None:
    words = entity_word_map(FACTS, {w for d in TRN for line in d.lines for w in line.render().split()})
    assert words["italian"] in {"korean", "french"} and words["thai"] in {"korean", "french"}
    assert words["rome"] in {"seoul", "tokyo"} and "cheap" not in words and "two" not in words  # shared values
    # the restaurant goes to the unseen one with its mapped cuisine, location and price, its phone with it
    target = f"resto_{words['paris']}_expensive_{words['thai']}"
    assert words["resto_paris_expensive_thai"] == target
    assert words["resto_paris_expensive_thai_phone"] == f"{target}_phone"


def test_every_line_is_swapped_word_for_word_and_its_spacing_kept() -> None:
    made = oov_dev(DEV, TRN, FACTS, CANDIDATES)
    assert made.left_out == 0 and len(made.dialogs) == 1
    swapped = made.dialogs[0]
    cuisine, location = made.words["thai"], made.words["paris"]
    assert swapped.lines[0].user == f"{cuisine}  food in {location} please"  # the double space kept
    assert swapped.lines[1].bot == f"api_call {cuisine} {location} two expensive"
    target = made.words["resto_paris_expensive_thai"]
    assert swapped.lines[2].text == f"{target} R_phone {target}_phone"
    assert [line.id for line in swapped.lines] == [1, 2, 3, 4]
    known = {w for d in TRN for line in d.lines for w in line.render().split()}
    entities = {value for _, _, value in FACTS} | {entity for entity, _, _ in FACTS}
    said = {w for line in swapped.lines for w in line.render().split()}
    assert not (said & known & entities - {"two", "cheap", "expensive"})  # no entity training holds is left


def test_a_dialog_whose_swapped_answer_is_no_candidate_is_left_out_and_counted() -> None:
    made = oov_dev(DEV, TRN, FACTS, CANDIDATES[:1])
    assert made.dialogs == [] and made.left_out == 1


def test_nothing_unseen_gives_an_empty_set() -> None:
    covered = TRN + parse_dialogs("".join(f"1 x\ty {entity} {value}\n\n" for entity, _, value in FACTS)).dialogs
    made = oov_dev(DEV, covered, FACTS, CANDIDATES)
    assert made.words == {} and made.dialogs == [] and made.left_out == 1


def test_an_empty_map_leaves_a_dialog_as_it_was() -> None:
    assert swap_dialog(DEV[0], {}) == DEV[0]


def _restaurants(*rows: tuple[str, str, str, str]) -> list[tuple[str, str, str]]:
    """(name, cuisine, location, rating) rows as KB facts, every one cheap."""
    return [(name, f"R_{attribute}", value) for name, cuisine, location, rating in rows
            for attribute, value in (("cuisine", cuisine), ("location", location), ("price", "cheap"),
                                     ("rating", rating))]


def test_restaurants_that_agree_on_every_swapped_value_stay_apart() -> None:
    # a task-3 dialog lists restaurants of one cuisine, location and price: each needs its own unseen one
    facts = _restaurants(("resto_a", "italian", "rome", "1"), ("resto_b", "italian", "rome", "1"),
                         ("resto_c", "korean", "seoul", "1"), ("resto_d", "korean", "seoul", "2"))
    words = entity_word_map(facts, {"italian", "rome", "cheap", "resto_a", "resto_b"})
    assert {words["resto_a"], words["resto_b"]} == {"resto_c", "resto_d"}


def test_a_dialog_whose_restaurants_would_become_one_is_left_out_and_counted() -> None:
    # three known restaurants and two unseen ones: two known ones must share a target
    facts = _restaurants(("resto_a", "italian", "rome", "1"), ("resto_b", "italian", "rome", "2"),
                         ("resto_e", "italian", "rome", "3"),
                         ("resto_c", "korean", "seoul", "1"), ("resto_d", "korean", "seoul", "2"))
    trn = parse_dialogs("1 italian in rome\tok\n2 resto_a resto_b resto_e\tsure\n\n").dialogs
    dev = parse_dialogs("1 italian in rome\tok\n2 resto_a\tsure\n\n"
                        "1 italian in rome\tok\n2 resto_a resto_b resto_e\tsure\n\n").dialogs
    made = oov_dev(dev, trn, facts, ["ok", "sure"])
    assert len({made.words[r] for r in ("resto_a", "resto_b", "resto_e")}) == 2
    assert made.left_out == 1 and len(made.dialogs) == 1
    assert made.dialogs[0].lines[1].user == made.words["resto_a"]
