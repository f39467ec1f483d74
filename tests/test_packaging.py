"""Beam's workers get the project's code from the package ``--setup_file setup.py`` stages. The Python worker pool in
the apache-beam package starts its workers without installing staged packages (that is the SDK container's boot
program, not in the pip package), so a worker on localhost cannot show a missing module. Instead: the package Beam
would build (``setup.py sdist``, as the stager runs it without the ``build`` module) is unpacked, and every module
the Beam stages run (the ExampleGens, the data gate, the TFMA metrics and extractors, the generators' renderers)
must import from it and nothing from the repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
# What Beam runs on workers: the components' executors and TFMA extensions, and the generators' shard renderers.
BEAM_STAGES = ("components.dialog_example_gen", "components.movie_example_gen", "components.data_gate",
               "components.dialog_metrics", "components.dialog_extractors", "data.babi.generation",
               "data.banking.generation", "data.movie.tasks")
# Imports the modules from ``root`` first, then reports where every module of the project's packages came from.
PROBE = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
failed = {}
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except ImportError as error:
        failed[name] = str(error)
ours = {n: getattr(m, "__file__", None) for n, m in sys.modules.items()
        if n.split(".")[0] in ("data", "models", "components", "pipeline")}
print(json.dumps({"failed": failed, "files": ours}))
"""


def _staged(tmp_path: Path) -> Path:
    # From a copy of the sources, as a fresh clone has them: setuptools would otherwise add what a stale
    # *.egg-info/SOURCES.txt in the working tree lists, and hide a package the configuration leaves out.
    source = tmp_path / "source"
    ignored = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("data", "models", "components", "pipeline"):
        shutil.copytree(REPOSITORY / name, source / name, ignore=ignored)
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPOSITORY / name, source / name)
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(tmp_path / "dist")], cwd=source,
                   check=True, capture_output=True)
    (archive,) = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(archive) as packed:
        packed.extractall(tmp_path / "unpacked", filter="data")
    (root,) = (tmp_path / "unpacked").iterdir()
    return root


def _probe(root: Path, modules: tuple[str, ...]) -> dict:
    ran = subprocess.run([sys.executable, "-c", PROBE, str(root), *modules], cwd=root, capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "3"})
    return json.loads(ran.stdout.strip().splitlines()[-1])


def test_the_staged_package_holds_every_module_the_beam_stages_import(tmp_path: Path) -> None:
    root = _staged(tmp_path)
    found = _probe(root, BEAM_STAGES)
    assert found["failed"] == {}
    outside = {name: path for name, path in found["files"].items() if path and not path.startswith(str(root))}
    assert not outside, outside  # taken from the repository: a worker would not have it
    assert set(BEAM_STAGES) <= set(found["files"])
    (root / "data" / "layout.py").unlink()  # a package without one module: the probe must see it
    missing = _probe(root, ("data.babi.generation",))
    assert "data.babi.generation" in missing["failed"] or not missing["files"]["data.layout"].startswith(str(root))
