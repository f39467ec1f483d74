"""The public Movie Dialog layout, read from a small hand-made corpus (tests/fixtures/movie_dialog)."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.babi_format import FormatError
from data.movie.reader import (
    EntityDictionary,
    Triple,
    discover_movie_corpus,
    read_candidates,
    read_dialogs,
    read_kb,
    split_answers,
)
from tests import FIXTURES

FIXTURE = FIXTURES / "movie_dialog"


def test_discovers_tasks_kb_entities_and_nested_reddit_candidates() -> None:
    corpus = discover_movie_corpus(FIXTURE)
    assert sorted(corpus.tasks) == [1, 3, 4] and sorted(corpus.tasks[1]) == ["dev", "train"]
    assert corpus.tasks[4]["dev"].parent.name == "task4_reddit"  # the release's nested folder
    assert corpus.kb is not None and corpus.kb.name == "movie_kb.txt"
    assert read_candidates(corpus.candidates["dev"])[0] == "yes , the last scene with Tom Vale was great"
    assert "Hello, Stranger" in corpus.entity_list()


def test_answers_with_commas_inside_titles_are_joined_back() -> None:
    known = {"Hello, Stranger", "River Song"}
    assert split_answers("Hello, Stranger, River Song", known) == ("Hello, Stranger", "River Song")
    assert split_answers("Mira Sol, Tom Vale", known) == ("Mira Sol", "Tom Vale")
    assert split_answers("Hello, Stranger|River Song", known, "|") == ("Hello, Stranger", "River Song")


def test_dialogs_reset_at_id_1_with_several_exchanges_in_task3() -> None:
    corpus = discover_movie_corpus(FIXTURE)
    entities = corpus.entity_list()
    qa = read_dialogs(corpus.tasks[1]["train"], entities)
    assert len(qa) == 3 and qa[1].exchanges[0].answers == ("Hello, Stranger", "River Song")
    dialogs = read_dialogs(corpus.tasks[3]["train"], entities)
    assert [len(d.exchanges) for d in dialogs] == [3, 1]
    assert dialogs[0].exchanges[1].text == "Who directed that?" and dialogs[0].exchanges[1].answers == ("Ana Ortega",)


def test_kb_triples_one_per_value() -> None:
    corpus = discover_movie_corpus(FIXTURE)
    triples = read_kb(corpus.kb, corpus.entity_list())
    assert Triple("Hello, Stranger", "starred_actors", "Tom Vale") in triples
    assert Triple("River Song", "release_year", "1970") in triples
    assert len(triples) == 10


def test_malformed_lines_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "task1_qa_train.txt"
    bad.write_text("1 who directed it?\tAna Ortega\n3 skipped an id\tx\n")
    with pytest.raises(FormatError, match=r"task1_qa_train.txt:2"):
        read_dialogs(bad)
    bad.write_text("1 no tab here\n")
    with pytest.raises(FormatError, match="no TAB"):
        read_dialogs(bad)
    kb = tmp_path / "movie_kb.txt"
    kb.write_text("1 River Song produced_by Nobody\n")
    with pytest.raises(FormatError, match=r"movie_kb.txt:1"):
        read_kb(kb)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no Movie Dialog task file"):
        discover_movie_corpus(tmp_path / "empty")


def test_entity_dictionary_parses_longest_entities_first_and_drops_rare_words() -> None:
    dictionary = EntityDictionary(["Hello, Stranger", "Tom Vale", "Tom"], ["who starred in it"] * 5 + ["rare"],
                                  min_count=5)
    tokens = dictionary.tokenize("Who starred in Hello, Stranger with Tom Vale? rare")
    assert tokens == ["who", "starred", "in", "hello , stranger", "tom vale"]  # "with", "?", "rare": too rare
    assert "rare" not in dictionary.words and "tom vale" in dictionary.entities
