"""The package tree's rules, read off every module's imports: arrows point one way, papers stay apart, and the
format core of ``data`` knows nothing of TensorFlow.

pipeline -> components -> models -> data; a paper's package (``models/babi``, ``models/movie``,
``models/banking``; ``data/restaurant``, ``data/movie``, ``data/banking``) never imports a sibling's, and the cores
(the top of ``models`` and ``models/serving``; the top of ``data``) import no paper's package, except the formats
that ``data.validate`` and ``data.stats`` read: the banking labels sidecar and the Movie Dialog layout.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
LAYERS = ("data", "models", "components", "pipeline")
PAPERS = {"models": ("babi", "movie", "banking"), "data": ("restaurant", "movie", "banking")}
CORE_MAY_IMPORT = {"data.banking.labels", "data.movie.reader"}  # formats the core reads, never a generator
FRAMEWORKS = ("tensorflow", "keras", "tfx", "tensorflow_model_analysis", "tensorflow_data_validation")


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (subcommands and tests import inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


MODULES = {module_name(p): imports(p) for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))}


def paper_of(module: str) -> tuple[str, str] | None:
    parts = module.split(".")
    if len(parts) > 1 and parts[0] in PAPERS and parts[1] in PAPERS[parts[0]]:
        return parts[0], parts[1]
    return None


def test_arrows_point_one_way() -> None:
    upward = []
    for module, names in MODULES.items():
        below = LAYERS[:LAYERS.index(module.split(".")[0]) + 1]
        upward += [f"{module} -> {name}" for name in sorted(names)
                   if name.split(".")[0] in LAYERS and name.split(".")[0] not in below]
    assert upward == []


def test_papers_stay_apart_and_cores_belong_to_none() -> None:
    crossings = []
    for module, names in MODULES.items():
        own = paper_of(module)
        for name in sorted(names):
            other = paper_of(name)
            if other is None or other == own or other[0] != module.split(".")[0]:
                continue
            if own is None and any(name == allowed or name.startswith(allowed + ".") for allowed in CORE_MAY_IMPORT):
                continue
            crossings.append(f"{module} -> {name}")
    assert crossings == []


def test_data_imports_no_tensorflow() -> None:
    assert [f"{m} -> {n}" for m, names in MODULES.items() if m.startswith("data")
            for n in sorted(names) if n.split(".")[0] in FRAMEWORKS] == []


def test_no_file_outside_the_repository_is_named() -> None:
    named = [str(p.relative_to(ROOT)) for layer in (*LAYERS, "benchmarks", "tests") for p in (ROOT / layer).rglob("*")
             if p.suffix in (".py", ".pbtxt") and any(word in p.read_text() for word in ("DESIGN.md", "TFX_NOTES",
                                                                                         "../shared"))]
    named += [name for name in ("README.md", "Makefile") if "../shared" in (ROOT / name).read_text()]
    assert named == [p for p in named if p == "tests/test_layout.py"]
