"""Properties of the reader and the validator, over inputs nobody wrote by hand (hypothesis, derandomized so CI
sees the same cases): any bytes either read back byte for byte or raise the documented FormatError naming the
file (and line); a corpus directory with a mutated file gives a report, never an exception."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from data import babi_format
from data.babi.generation import GenerationPlan, generate
from data.babi_format import FormatError
from data.layout import SHARED_CANDIDATES, SHARED_KB, dialog_file_name
from data.validate import validate_corpus

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
# Bytes drawn mostly from what dialog files are made of, so that many inputs get past the first line.
DIALOG_BYTES = st.lists(st.sampled_from([b"1 ", b"2 ", b"3 ", b"10 ", b"hello", b"api_call x y", b" ", b"\t",
                                         b"\n", b"\r\n", b"<SILENCE>", b"r R_phone p", b"\x00", b"\xff", b"\xc3\xa9",
                                         b"\t\t", b"1", b"R_x"]), max_size=40).map(b"".join)
ANY_BYTES = st.one_of(st.binary(max_size=200), DIALOG_BYTES)
FORMATS = {"dialogs.txt": (babi_format.parse_dialogs, babi_format.render_dialogs),
           "candidates.txt": (babi_format.parse_candidates, babi_format.render_candidates),
           "kb.txt": (babi_format.parse_kb, babi_format.render_kb)}


@PROPERTY
@given(data=ANY_BYTES, name=st.sampled_from(sorted(FORMATS)))
def test_any_bytes_read_back_exactly_or_raise_the_documented_error(data: bytes, name: str) -> None:
    parse, render = FORMATS[name]
    try:
        parsed = parse(babi_format.decode(data, name), name)
    except FormatError as error:
        assert error.path == name and (error.line is None or error.line >= 1)
        assert str(error).startswith(f"{name}:")
        return
    assert render(parsed).encode("utf-8") == data


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Module-scoped: hypothesis runs every example in one call of the test, and pytest removes the directory."""
    out = tmp_path_factory.mktemp("property-corpus")
    generate(GenerationPlan(seed=8, dialogs_per_split=2, tasks=(1, 3)), out, runner="local")
    return out


MUTATED = [dialog_file_name(1, "trn"), dialog_file_name(3, "dev"), SHARED_CANDIDATES, SHARED_KB]


@settings(PROPERTY, max_examples=100)  # each example copies a corpus directory
@given(name=st.sampled_from(MUTATED), position=st.floats(0, 1), cut=st.integers(0, 5),
       insert=st.binary(max_size=6))
def test_a_mutated_corpus_gives_a_report_never_an_exception(corpus: Path, name: str, position: float, cut: int,
                                                           insert: bytes) -> None:
    with tempfile.TemporaryDirectory() as work:
        copy = Path(work) / "corpus"
        shutil.copytree(corpus, copy)
        path = copy / name
        data = path.read_bytes()
        at = int(position * len(data))
        path.write_bytes(data[:at] + insert + data[at + cut:])
        report = validate_corpus(copy)
        for problem in report.problems:
            assert Path(problem.path).parent == copy or Path(problem.path) == copy
            assert problem.line is None or problem.line >= 1
        if path.read_bytes() == data:
            assert report.ok
