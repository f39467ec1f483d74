"""Movie Dialog text as the models read it: one token per KB entity, and the long-term memory found by hash."""

from __future__ import annotations

from data.movie.reader import EntityDictionary
from models.movie.text import EntityText, prepare_text


def test_entity_text_makes_each_entity_one_token(movies) -> None:
    corpus, entities, _ = movies
    text = EntityText(EntityDictionary(entities, ["who directed it"] * 5), entities)
    multiword = next(e for e in entities if " " in e)
    assert " " not in text.token_of[multiword] and text.entity_of[text.token_of[multiword]] == multiword
    assert text(f"who directed {multiword}?").split()[-1] == text.token_of[multiword]


def test_long_term_memory_finds_the_kb_sentences_of_the_message(movies) -> None:
    corpus, entities, triples = movies
    text = EntityText(EntityDictionary(entities, ["who directed it"] * 5), entities, triples, max_kb=5)
    title = triples[0].subject
    found = text.long_term(text(f"who directed {title}?"))
    assert found and all(sentence.split()[0] == text.token_of[title] for sentence in found)
    assert len(found) <= 5 and any(" directed_by " in sentence for sentence in found)


def test_candidates_are_the_entities_then_the_replies_and_map_back(data) -> None:
    replies = data.candidates("dev")[:3]
    text, candidates = prepare_text(data.entities, data.examples(4, "train")[:20], replies)
    assert len(candidates) == len(data.entities) + len(replies)
    assert [text.entity_of.get(c, c) for c in candidates] == [*data.entities, *replies]
