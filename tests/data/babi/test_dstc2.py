"""The DSTC2 converter on hand-made calls in the DSTC2 schema (tests/fixtures/dstc2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from data import babi_format
from data.babi.dstc2 import WELCOME, Dstc2Error, convert_release, read_call
from data.corpus import NO_RESULT, is_api_call
from data.layout import discover
from data.validate import validate_corpus
from pipeline.cli import main
from tests import FIXTURES

FIXTURE = FIXTURES / "dstc2"
PREZZO_CALL = "Mar13_S0A0/voip-a1"


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    root = tmp_path / "dstc2"
    shutil.copytree(FIXTURE, root)
    return root


def _lines(path: Path) -> list[list[str]]:
    dialogs, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line:
            dialogs.append(current)
            current = []
        else:
            current.append(line)
    return dialogs + ([current] if current else [])


def test_converted_dialog_follows_the_public_conventions(tmp_path: Path) -> None:
    convert_release(FIXTURE, tmp_path)
    first = _lines(tmp_path / "dialog-babi-task6-dstc2-trn.txt")[0]
    assert first[0] == f"1 <SILENCE>\t{WELCOME}"
    assert first[1] == ("2 i want a moderately priced restaurant in the west part of town"
                        "\tapi_call R_cuisine west moderate")
    # Seven result lines per matching restaurant, in the public files' attribute order.
    assert first[2:9] == ["3 prezzo R_post_code prezzo_post_code", "4 prezzo R_cuisine italian",
                          "5 prezzo R_location west", "6 prezzo R_phone prezzo_phone",
                          "7 prezzo R_address prezzo_address", "8 prezzo R_price moderate", "9 prezzo R_rating 10"]
    assert first[9].startswith("10 saint_johns_chop_house R_post_code")
    assert first[16] == "17 <SILENCE>\tprezzo is a nice restaurant in the west of town in the moderate price range"
    # Spoken addresses and phone numbers become placeholders; no second API call for the same goal.
    assert first[17:] == ["18 what kind of food do they serve\tprezzo serves italian food",
                          "19 what is the address\tSure , prezzo is on prezzo_address",
                          "20 and the phone number\tThe phone number of prezzo is prezzo_phone .",
                          "21 thank you good bye\t you are welcome"]


def test_no_result_dontcare_silence_and_multiword_entities(tmp_path: Path) -> None:
    convert_release(FIXTURE, tmp_path)
    second = _lines(tmp_path / "dialog-babi-task6-dstc2-trn.txt")[1]
    assert second[1:4] == [
        "2 im looking for a cheap restaurant that serves tuscan food\tapi_call tuscan R_location cheap",
        f"3 {NO_RESULT}", "4 <SILENCE>\tSorry there is no tuscan restaurant in the cheap price range"]
    assert second[4] == "5 moderately priced modern_european food\tWhat part of town do you have in mind?"
    assert second[5] == "6 any part of town\tapi_call modern_european R_location moderate"
    assert "7 riverside_brasserie R_post_code riverside_brasserie_post_code" in second
    assert "15 <SILENCE>\tCan I help you with anything else?" in second  # an empty transcription


def test_offered_restaurant_has_the_highest_rating(tmp_path: Path) -> None:
    convert_release(FIXTURE, tmp_path)
    for split in ("trn", "dev", "tst"):
        for dialog in babi_format.read_dialogs(tmp_path / f"dialog-babi-task6-dstc2-{split}.txt"):
            lines = list(dialog.lines)
            for index, line in enumerate(lines):
                ratings = {}
                if getattr(line, "bot", "").startswith("api_call"):
                    follow = index + 1
                    while not hasattr(lines[follow], "bot"):
                        fact = lines[follow].fact
                        if fact and fact[1] == "R_rating":
                            ratings[fact[0]] = int(fact[2])
                        follow += 1
                    offered = lines[follow].bot.split()[0]
                    if ratings:
                        assert ratings[offered] == max(ratings.values())
                        assert sorted(ratings.values()).count(ratings[offered]) == 1


def test_output_is_a_valid_task6_corpus_whose_candidates_cover_every_bot_turn(tmp_path: Path) -> None:
    report = convert_release(FIXTURE, tmp_path)
    assert report.dialogs == {"trn": 2, "dev": 1, "tst": 1} and report.skipped == []
    files = discover(tmp_path)[6]
    assert sorted(files.splits) == ["dev", "trn", "tst"] and files.candidates is not None
    assert validate_corpus(tmp_path).ok
    candidates = set(babi_format.read_candidates(files.candidates).candidates)
    for path in files.splits.values():
        for dialog in babi_format.read_dialogs(path):
            assert {turn.bot for turn in dialog.turns} <= candidates
    assert sum(is_api_call(c) for c in candidates) == 5  # one per distinct goal


def test_conversion_is_deterministic(tmp_path: Path) -> None:
    convert_release(FIXTURE, tmp_path / "a")
    convert_release(FIXTURE, tmp_path / "b")
    for path in (tmp_path / "a").iterdir():
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()


@pytest.mark.parametrize(("damage", "message"), [
    (lambda call: (call / "label.json").unlink(), "label.json: missing file"),
    (lambda call: (call / "log.json").write_text("{\"turns\": [", encoding="utf-8"), "log.json: not valid JSON"),
    (lambda call: _drop_last_label_turn(call), "log.json has 5 turns but label.json has 4"),
    (lambda call: _rewrite(call / "log.json", lambda d: d["turns"][1]["output"].pop("transcript")),
     "log.json: turn 1: missing field 'output.transcript'"),
    (lambda call: _rewrite(call / "log.json", lambda d: d["turns"][1]["output"]["dialog-acts"][0].update(slots=5)),
     "turn 1: the slots of act 'offer' are not a list of [slot, value]"),
])
def test_malformed_call_is_an_error_naming_its_path(release: Path, tmp_path: Path, damage, message: str) -> None:
    call = release / "data" / PREZZO_CALL
    damage(call)
    out = tmp_path / "out"
    with pytest.raises(Dstc2Error, match="voip-a1") as error:
        convert_release(release, out)
    assert message in str(error.value)
    assert not out.exists()  # nothing written when a call is bad

    report = convert_release(release, out, skip_bad=True)
    assert report.dialogs["trn"] == 1 and len(report.skipped) == 1 and message in report.skipped[0]
    assert validate_corpus(out).ok


def test_skipping_every_call_writes_nothing_over_a_good_conversion(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    convert_release(release, out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    for label in (release / "data").rglob("label.json"):
        label.unlink()
    with pytest.raises(Dstc2Error, match="could be read .* skipped as malformed\\); nothing written"):
        convert_release(release, out, skip_bad=True)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def _rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _drop_last_label_turn(call: Path) -> None:
    _rewrite(call / "label.json", lambda d: d["turns"].pop())


def test_read_call_pairs_system_and_user_turns() -> None:
    call = read_call(FIXTURE / "data" / PREZZO_CALL)
    assert call.session_id == "voip-a1" and len(call.system) == len(call.user) == 5
    assert call.user[0].goal == {"area": "west", "pricerange": "moderate"}
    assert call.user[0].transcription.startswith("i want")  # lower-cased
    assert call.system[1].slot_values("name") == ["prezzo"]


def test_cli_converts_and_reports_bad_calls(release: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["convert", "dstc2", "--src", str(release), "--out", str(tmp_path / "ok")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ok" / "dialog-babi-task6-dstc2-tst.txt").is_file()

    (release / "data" / PREZZO_CALL / "log.json").unlink()
    result = runner.invoke(main, ["convert", "dstc2", "--src", str(release), "--out", str(tmp_path / "bad")])
    assert result.exit_code == 1 and "voip-a1/log.json: missing file" in result.output
    result = runner.invoke(main, ["convert", "dstc2", "--src", str(release), "--out", str(tmp_path / "bad"),
                                  "--skip-bad"])
    assert result.exit_code == 0 and "skipped" in result.output and "trn 1" in result.output


def test_a_conversion_that_validate_would_reject_is_not_written(release: Path, tmp_path: Path) -> None:
    """Whitespace-only transcripts made an empty bot utterance and a candidate of '1 ': files the project's own
    validate rejects. The conversion is checked before it takes the files' names, and the old one stays."""
    out = tmp_path / "out"
    convert_release(release, out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    for call in (release / "data").glob("*/*"):
        _rewrite(call / "log.json", lambda d: [turn["output"].update(transcript="  ") for turn in d["turns"]])
        _rewrite(call / "label.json", lambda d: [turn.update(transcription=" ") for turn in d["turns"]])
    with pytest.raises(Dstc2Error, match="would not pass validation .*; nothing written"):
        convert_release(release, out)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


@pytest.mark.parametrize(("file", "content", "message"), [
    ("scripts/config/ontology_dstc2.json", b"[1, 2]", "expected an object whose 'informable' maps each slot"),
    ("scripts/config/ontology_dstc2.json", b"\xff\xfe{}", "ontology_dstc2.json: not valid UTF-8 (byte 0xff)"),
    ("scripts/config/ontology_dstc2.json", b"{]", "ontology_dstc2.json: not valid JSON"),
    ("scripts/config/dstc2_train.flist", b"Mar13_S0A0/voip-a1\n\xff\xfe\n", "dstc2_train.flist: not valid UTF-8"),
])
def test_a_malformed_ontology_or_file_list_is_one_line_naming_it(release: Path, tmp_path: Path, file: str,
                                                                 content: bytes, message: str) -> None:
    from click.testing import CliRunner

    from pipeline.cli import main

    (release / file).write_bytes(content)
    result = CliRunner().invoke(main, ["convert", "dstc2", "--src", str(release), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert "--skip-bad" not in result.output  # it leaves calls out, not a bad ontology or file list
