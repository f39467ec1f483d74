"""The graph's dictionary and long-term memory give what the Python text preparation gives, text for text."""

from __future__ import annotations

import tensorflow as tf

from data.movie.reader import EntityDictionary
from models.movie.graph_text import EMPTY, GraphEntityText
from models.movie.text import EntityText


def _python_text(data, triples=()) -> EntityText:
    texts = [e.query for task in (1, 2, 3, 4) for e in data.examples(task, "train")]
    return EntityText(EntityDictionary(data.entities, texts), data.entities, triples)


def _texts(data) -> list[str]:
    """Questions, histories and replies of every task, and text made to trip a greedy parse."""
    examples = [e for task in (1, 2, 3, 4) for e in data.examples(task, "dev")[:40]]
    made = ["", "   ", "Who DIRECTED it?!", f"{data.entities[0]}, {data.entities[1]}; and {data.entities[2]}."]
    return [*made, *(e.query for e in examples), *(h for e in examples for h in e.history)]


def test_tokens_are_the_dictionarys_with_and_without_rare_words(data) -> None:
    python = _python_text(data)
    texts = _texts(data)
    graph = GraphEntityText(data.entities, words=sorted(python.dictionary.words))
    assert [t.decode() for t in graph.tokens(tf.constant(texts)).numpy()] == [python(t) for t in texts]
    every = GraphEntityText(data.entities)
    parsed = [" ".join(t.replace(" ", "_") for t in python.dictionary._parse(text.lower())) or EMPTY for text in texts]
    assert [t.decode() for t in every.tokens(tf.constant(texts)).numpy()] == parsed


def test_long_term_memory_is_the_hash_lookups(data, movies) -> None:
    python = _python_text(data, movies[2])
    graph = GraphEntityText(data.entities, python.kb, words=sorted(python.dictionary.words), max_frequency=20,
                            max_kb=7)
    python.max_frequency, python.max_kb = 20, 7
    messages = [python(t) for t in _texts(data)]
    found = graph.long_term(tf.constant(messages))
    assert [[s.decode() for s in row] for row in found.to_list()] == [python.long_term(m) for m in messages]
    assert any(len(row) == 7 for row in found.to_list())  # the cap is reached, so its order is checked
