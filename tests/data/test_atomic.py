"""Atomic writes: a file or directory appears whole or not at all, and only our own leftovers are cleared."""

from __future__ import annotations

import contextlib
import errno
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data.atomic import (
    DirectoryBusy,
    atomic_output,
    clear_leftovers,
    one_writer,
    one_writer_of,
    replace_directory,
    staged_files,
    write_text_atomic,
)


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "new \ud800 text\n")  # a lone surrogate cannot be encoded
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_atomic_write_gives_a_new_files_usual_mode_not_the_temporary_files(tmp_path: Path) -> None:
    import os

    path = tmp_path / "dialogs.txt"
    write_text_atomic(path, "1 hi\tthere\n")
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_directory_is_replaced_whole_and_kept_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "model"

    def write(version: str):
        def fill(staging: str) -> None:
            Path(staging).mkdir()
            (Path(staging) / "saved_model.pb").write_text(version)
        return fill

    replace_directory(target, write("1"))
    replace_directory(target, write("2"))
    assert (target / "saved_model.pb").read_text() == "2"

    def broken(staging: str) -> None:
        Path(staging).mkdir()
        (Path(staging) / "half").write_text("x")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        replace_directory(target, broken)
    assert (target / "saved_model.pb").read_text() == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_the_working_directory_is_never_replaced() -> None:
    for name in (".", "..", "/"):
        with pytest.raises(ValueError, match="not a directory name that can be replaced"):
            replace_directory(name, lambda staging: None)


def test_clear_leftovers_removes_only_what_a_killed_write_leaves(tmp_path: Path) -> None:
    (tmp_path / ".model.tmp-0123abcd").mkdir()
    (tmp_path / ".model.old-89abcdef").mkdir()
    (tmp_path / ".table.md.tmp-00000000").write_text("half")
    (tmp_path / ".model.old").mkdir()  # the names an earlier export left when killed
    (tmp_path / ".model.tmp").mkdir()
    keep = [".table.md.tmp", ".model.tmp-notours", "model", ".hidden", "notes.tmp-0123abcd"]
    for name in keep:
        (tmp_path / name).write_text("mine")
    assert sorted(clear_leftovers(tmp_path, "model")) == [".model.old", ".model.old-89abcdef", ".model.tmp",
                                                          ".model.tmp-0123abcd"]
    assert clear_leftovers(tmp_path) == [".table.md.tmp-00000000"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep)


def test_a_failed_file_write_leaves_no_temporary(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        with atomic_output(tmp_path / "sub" / "out.bin") as handle:
            handle.write(b"half")
            raise ValueError("killed")
    assert list((tmp_path / "sub").iterdir()) == []


FILE_NAMES = st.lists(st.sampled_from(["trn.txt", "dev.txt", "kb.txt", "task1/a.txt", "task1/b.txt", "task2/a.txt"]),
                      unique=True, max_size=6)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(old=FILE_NAMES, new=FILE_NAMES, fail_at=st.integers(min_value=0, max_value=6))
def test_a_set_of_files_is_staged_whole_or_not_at_all(old: list[str], new: list[str], fail_at: int) -> None:
    """Whatever the corpus held and whichever file the writer fails at (a full disk, a bad input), the directory
    holds the old files byte for byte; when no write fails, the new files over the old ones, the rest kept."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "corpus"
        for name in old:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(f"old {name}")
        with contextlib.suppress(OSError), one_writer(out), staged_files(out) as staging:
            for index, name in enumerate(new):
                if index == fail_at:
                    raise OSError(errno.ENOSPC, "No space left on device", name)
                (Path(staging) / name).parent.mkdir(parents=True, exist_ok=True)
                (Path(staging) / name).write_text(f"new {name}")
        failed = fail_at < len(new)
        expected = {name: f"old {name}" for name in old} | ({} if failed else {name: f"new {name}" for name in new})
        held = {str(path.relative_to(out)): path.read_text() for path in out.rglob("*") if path.is_file()}
        assert held == expected


def test_the_lock_of_a_replaced_output_refuses_a_second_writer_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "model"
    with one_writer_of(out):
        assert [p.name for p in tmp_path.iterdir()] == [".model.lock"]
        with pytest.raises(DirectoryBusy, match="model is being written by another process"), one_writer_of(out):
            pass
    assert list(tmp_path.iterdir()) == []
    with one_writer_of(out):  # free again
        pass


def _victim(tmp_path: Path) -> Path:
    """A directory the project never wrote, with a file and a subdirectory's file."""
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "a.txt").write_text("a")
    (victim / "sub" / "b.txt").write_text("b")
    return victim


def _intact(victim: Path) -> bool:
    return (victim / "a.txt").read_text() == "a" and (victim / "sub" / "b.txt").read_text() == "b"


@pytest.mark.parametrize("through_tensorflow", [False, True])
def test_a_link_planted_as_a_leftover_is_unlinked_and_its_target_kept(tmp_path: Path, through_tensorflow: bool) -> None:
    from data.atomic import LOCAL

    fs = LOCAL
    if through_tensorflow:  # TensorFlow's isdir follows the link and its rmtree empties the target
        from models.gfile import GFILE as fs
    victim = _victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / ".mv.tmp-deadbeef").symlink_to(victim, target_is_directory=True)
    (out / ".mv.old-0badf00d").symlink_to(victim / "a.txt")
    assert sorted(clear_leftovers(out, fs=fs)) == [".mv.old-0badf00d", ".mv.tmp-deadbeef"]
    assert _intact(victim) and list(out.iterdir()) == []


def test_replacing_an_output_that_is_a_link_unlinks_it_and_keeps_its_target(tmp_path: Path) -> None:
    from models.gfile import GFILE

    victim = _victim(tmp_path)
    out = tmp_path / "model"
    out.symlink_to(victim, target_is_directory=True)
    replace_directory(out, lambda staging: Path(staging).mkdir(), GFILE)
    assert _intact(victim) and out.is_dir() and not out.is_symlink()


def test_staging_and_shard_leftovers_that_are_links_keep_their_targets(tmp_path: Path) -> None:
    from data.atomic import STAGING_PREFIX
    from data.sharded_files import STAGING_PREFIX as SHARDS
    from data.sharded_files import clear_staging

    victim = _victim(tmp_path)
    out = tmp_path / "corpus"
    out.mkdir()
    (out / f"{STAGING_PREFIX}x").symlink_to(victim, target_is_directory=True)
    (out / f"{SHARDS}y").symlink_to(victim, target_is_directory=True)
    clear_staging(out)
    with staged_files(out) as staging:
        (Path(staging) / "f.txt").write_text("new")
    assert _intact(victim) and sorted(p.name for p in out.iterdir()) == ["f.txt"]


@pytest.mark.parametrize("dangling", [True, False])
def test_a_link_in_a_lock_files_place_is_refused_not_written_through(tmp_path: Path, dangling: bool) -> None:
    from data.atomic import UnsafePath

    target = tmp_path / "elsewhere" / "target"
    target.parent.mkdir()
    if not dangling:
        target.write_text("keep")
    (tmp_path / ".OUT.lock").symlink_to(target)
    with pytest.raises(UnsafePath, match=r"\.OUT\.lock is a symbolic link"), one_writer_of(tmp_path / "OUT"):
        pass
    assert target.exists() != dangling and (dangling or target.read_text() == "keep")


def test_a_link_planted_at_a_folder_the_corpus_writes_is_refused_before_any_file_moves(tmp_path: Path) -> None:
    """``generate movies`` with ``OUT/task1_qa`` a link wrote the task's files into the link's target."""
    from data.atomic import UnsafePath

    victim = _victim(tmp_path)
    out = tmp_path / "corpus"
    out.mkdir()
    (out / "task1_qa").symlink_to(victim, target_is_directory=True)
    with pytest.raises(UnsafePath, match=r"task1_qa is a symbolic link where this command writes a folder"), \
            staged_files(out) as staging:
        (Path(staging) / "entities.txt").write_text("e")
        (Path(staging) / "task1_qa").mkdir()
        (Path(staging) / "task1_qa" / "a.txt").write_text("new")
    assert _intact(victim) and sorted(p.name for p in out.iterdir()) == ["task1_qa"]  # nothing moved in
