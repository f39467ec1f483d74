"""A Movie Dialog exchange as the pipeline writes it: every answer as text, the first three parsed for training."""

from __future__ import annotations

from dataclasses import replace

from models.movie.records import ANSWER_INDICES, ANSWERS, PARSED, MovieCandidates, Parser, movie_tf_examples
from models.movie.text import MAX_ANSWERS


def test_every_answer_is_kept_and_indexed_and_the_first_three_are_parsed(data) -> None:
    question = next(e for e in data.examples(1, "dev") if len(e.answers) >= 2)
    # More answers than training draws from: the question's own and the next entities of the world.
    answers = tuple(dict.fromkeys([*question.answers, *data.entities]))[:MAX_ANSWERS + 4]
    example = replace(question, answers=answers)
    candidates = MovieCandidates.of(data.entities, {})
    parser = Parser(data.entities)
    (record,) = movie_tf_examples([example], candidates, candidates.indices(), parser)
    feature = record.features.feature
    assert [v.decode() for v in feature[ANSWERS].bytes_list.value] == list(answers)
    assert list(feature[ANSWER_INDICES].int64_list.value) == [data.entities.index(a) for a in answers]
    assert [v.decode() for v in feature[PARSED[ANSWERS]].bytes_list.value] == parser(list(answers[:MAX_ANSWERS]))
