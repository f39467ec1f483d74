"""Fixtures shared by the tests beside this file."""

from __future__ import annotations

import pytest

from data.facts import corpus_facts
from data.layout import discover
from models.babi.template.lexicon import EntityLexicon
from models.examples import split_examples
from tests import FIXTURES

FIXTURE = FIXTURES / "task6-rules"


@pytest.fixture(scope="module")
def task6():
    files = discover(FIXTURE)[6]
    trn = split_examples(files, "trn")
    return files, trn, EntityLexicon.learn(corpus_facts(files), [e.answer for e in trn])
