"""The package tree's rules, read off every module's imports: arrows point one way, papers stay apart, and the
format core of ``data`` knows nothing of TensorFlow.

pipeline -> components -> models -> data; each paper has one package name in both layers (``babi``, ``movie``,
``banking``), a paper's package never imports another paper's, in either layer (``models.banking`` may read
``data.banking``, never ``data.babi``), and the cores (the top of ``models`` and ``models/serving``; the top of
``data``) import no paper's package, except the formats that ``data.validate`` and ``data.stats`` read: the banking
labels sidecar and the Movie Dialog layout. ``components`` and ``pipeline`` may use any paper.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
LAYERS = ("data", "models", "components", "pipeline")
PAPER_NAMES = ("babi", "movie", "banking")
PAPERS = {"models": PAPER_NAMES, "data": PAPER_NAMES}
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
        if own is None and module.split(".")[0] in ("components", "pipeline"):
            continue  # the layers above the models use every paper
        for name in sorted(names):
            other = paper_of(name)
            if other is None or (own is not None and other[1] == own[1]):
                continue
            if own is None and any(name == allowed or name.startswith(allowed + ".") for allowed in CORE_MAY_IMPORT):
                continue
            crossings.append(f"{module} -> {name}")
    assert crossings == []


def test_each_paper_has_one_name_in_both_layers() -> None:
    for layer in ("data", "models"):
        packages = {p.parent.name for p in (ROOT / layer).glob("*/__init__.py")} - {"serving"}
        assert packages == set(PAPER_NAMES), layer


def test_data_imports_no_tensorflow() -> None:
    assert [f"{m} -> {n}" for m, names in MODULES.items() if m.startswith("data")
            for n in sorted(names) if n.split(".")[0] in FRAMEWORKS] == []


def test_no_file_outside_the_repository_is_named() -> None:
    named = [str(p.relative_to(ROOT)) for layer in (*LAYERS, "benchmarks", "tests") for p in (ROOT / layer).rglob("*")
             if p.suffix in (".py", ".pbtxt") and any(word in p.read_text() for word in ("DESIGN.md", "TFX_NOTES",
                                                                                         "../shared"))]
    named += [name for name in ("README.md", "Makefile") if "../shared" in (ROOT / name).read_text()]
    assert named == [p for p in named if p == "tests/test_layout.py"]


def test_only_the_vertex_modules_import_the_vertex_ai_client() -> None:
    """``tfx.v1``'s package imports TFX's Google Cloud extension and with it the Vertex AI client, seconds of every
    process that builds or runs the pipeline: a local run reaches TFX's modules directly."""
    vertex = {"components.vertex_training", "pipeline.kubeflow_v2_runner"}
    client = ("tfx.v1", "tfx.extensions.google_cloud_ai_platform", "google.cloud.aiplatform")
    assert [f"{m} -> {n}" for m, names in MODULES.items() if m not in vertex for n in sorted(names)
            if n.startswith(client)] == []
