"""The pusher: a version appears whole or not at all, and a killed push is cleared."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from threading import Event


def test_push_is_atomic_and_clears_a_killed_push(tmp_path: Path) -> None:
    from components.atomic_pusher import push_atomically

    model = tmp_path / "model"
    (model / "variables").mkdir(parents=True)
    (model / "saved_model.pb").write_bytes(b"pb")
    (model / "variables" / "variables.index").write_bytes(b"ix")
    serving = tmp_path / "serving"
    (serving / ".123.tmp-0123abcd").mkdir(parents=True)  # what a killed push leaves behind
    path, version = push_atomically(str(model), str(serving))
    assert Path(path) == serving / version and version.isdigit()
    assert (serving / version / "saved_model.pb").read_bytes() == b"pb"
    assert (serving / version / "variables" / "variables.index").is_file()
    second, next_version = push_atomically(str(model), str(serving))
    assert int(next_version) > int(version)  # never overwrites a pushed version
    assert sorted(p.name for p in serving.iterdir()) == sorted([version, next_version])


def _push(model: str, serving: str, started: Event) -> tuple[str, str]:
    from components.atomic_pusher import push_atomically  # imported first: the two pushes start together

    started.wait()
    return push_atomically(model, serving)


def test_two_pushes_at_once_publish_two_whole_versions(tmp_path: Path) -> None:
    """Two processes pushing into one serving directory in the same second (two pipelines serving one model)."""
    model = tmp_path / "model"
    (model / "variables").mkdir(parents=True)
    for number in range(200):  # many files: the copies take long enough to overlap
        (model / "variables" / f"part-{number}").write_bytes(b"v" * 10_000)
    (model / "saved_model.pb").write_bytes(b"pb" * 1_000_000)
    serving = tmp_path / "serving"
    with multiprocessing.Manager() as manager, ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(
            "spawn")) as pool:
        started = manager.Event()
        pushes = [pool.submit(_push, str(model), str(serving), started) for _ in range(2)]
        started.set()
        versions = sorted(push.result()[1] for push in pushes)
    assert len(set(versions)) == 2
    assert sorted(p.name for p in serving.iterdir()) == versions
    assert all((serving / v / "saved_model.pb").stat().st_size == 2_000_000 for v in versions)


def test_a_link_planted_as_a_killed_push_keeps_its_target(tmp_path: Path) -> None:
    """A link ``ROOT/serving_model/memn2n/.evil.tmp-0badf00d`` to a directory outside made the Pusher empty it."""
    from components.atomic_pusher import push_atomically

    model = tmp_path / "model"
    model.mkdir()
    (model / "saved_model.pb").write_bytes(b"pb")
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "a.txt").write_text("a")
    (victim / "sub" / "b.txt").write_text("b")
    serving = tmp_path / "root" / "serving_model" / "memn2n"
    serving.mkdir(parents=True)
    (serving / ".evil.tmp-0badf00d").symlink_to(victim, target_is_directory=True)
    _, version = push_atomically(str(model), str(serving))
    assert (victim / "a.txt").read_text() == "a" and (victim / "sub" / "b.txt").read_text() == "b"
    assert sorted(p.name for p in serving.iterdir()) == [version]
