"""A real full disk and a real read-only mount, not patched ones: a small tmpfs or a read-only bind mount in a user
namespace (``unshare``), where the platform allows it; skipped where it does not (a container without user
namespaces)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from data.babi.generation import GenerationPlan, generate

REPOSITORY = Path(__file__).resolve().parents[1]
# The size check of generate is patched away (its refusal is tested in test_cli): here the writes themselves fail.
GENERATE = ("import collections, shutil, sys; usage = collections.namedtuple('usage', 'total used free'); "
            "shutil.disk_usage = lambda path: usage(10**12, 0, 10**12); from pipeline.cli import main; "
            "main(sys.argv[1:])")


def _can_mount_tmpfs(scratch: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    (scratch / "probe").mkdir()
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {scratch / 'probe'}"],
                           capture_output=True, check=False)
    return probe.returncode == 0


def test_regenerating_onto_a_full_disk_keeps_the_old_corpus_whole(tmp_path: Path) -> None:
    """The disk fills while the new corpus is staged: one line naming the file and the error, exit 1, and the old
    corpus byte for byte, with no staging left beside it."""
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("no user namespace to mount a tmpfs in")
    disk, results = tmp_path / "disk", tmp_path / "results"
    disk.mkdir()
    results.mkdir()
    generate = [sys.executable, "-c", GENERATE, "generate", "restaurant", "--out", f"{disk}/corpus", "--dialogs", "2",
                "--runner", "local"]
    script = "\n".join([
        "set -e",
        f"mount -t tmpfs -o size=4m tmpfs {disk}",
        f"{shlex.join(generate)} --tasks 1 --seed 0 > /dev/null 2>&1",
        f"cd {disk}/corpus && sha256sum * > {results}/before",
        # room for a few more kilobytes: the new KB and candidates (about 780 kB) cannot be staged
        f"mount -o remount,size=$(( $(du -sk {disk} | cut -f1) + 64 ))k {disk}",
        f"{shlex.join(generate)} --tasks 1,2 --seed 0 > {results}/output 2>&1 || echo $? > {results}/exit",
        f"sha256sum * > {results}/after",
        f"ls -A > {results}/listing",
    ])
    ran = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, check=False,
                         cwd=REPOSITORY, env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr
    output = (results / "output").read_text()
    assert (results / "exit").read_text().strip() == "1", output
    assert output.startswith("Error: ") and output.count("\n") == 1 and "No space left on device" in output, output
    assert (results / "after").read_text() == (results / "before").read_text()
    assert (results / "listing").read_text().split() == sorted(line.split()[1] for line in
                                                                (results / "before").read_text().splitlines())


def test_a_corpus_on_a_read_only_mount_is_read_under_its_lock(tmp_path: Path) -> None:
    """The readers' shared lock needs only a descriptor open for reading: validate, stats and show work on a corpus
    mounted read-only (a bind mount in a user namespace)."""
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("no user namespace to mount in")
    corpus, mount = tmp_path / "corpus", tmp_path / "mount"
    generate(GenerationPlan(seed=0, dialogs_per_split=2, tasks=(1,)), corpus, runner="local")
    mount.mkdir()
    command = [sys.executable, "-c", GENERATE]
    script = "\n".join([
        "set -e",
        f"mount --bind {corpus} {mount} && mount -o remount,bind,ro {mount}",
        f"! touch {mount}/written 2> /dev/null",  # read-only indeed
        *(f"{shlex.join([*command, *arguments])}" for arguments in (
            ["validate", str(mount)], ["stats", str(mount)], ["show", str(mount), "--task", "1"])),
    ])
    ran = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, check=False,
                         cwd=REPOSITORY, env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("OK: ") and "Table 1" in ran.stdout and "task 1 trn dialog 0" in ran.stdout
