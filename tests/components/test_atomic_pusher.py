"""The pusher: a version appears whole or not at all, and a killed push is cleared."""

from __future__ import annotations

from pathlib import Path


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
