r"""The package layers import one way only.

``data → partition → models → eval → training → federated → runtime →
privacy → report → cli``:
a module may import its own package and the packages to its left, never one
to its right, at module level or inside a function. Inside ``federated``,
the core modules import no family sub-package, and the families import only
the core, ``kge`` (for ``unlearning``) and themselves. Imports are read with
:mod:`ast`, so a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "fedgraph"
ORDER = [
    "data",
    "partition",
    "models",
    "eval",
    "training",
    "federated",
    "runtime",
    "privacy",
    "report",
    "cli",
]
#: family sub-package → the families it may import besides itself
FAMILIES = {"kge": set(), "rgcn": set(), "text": set(), "unlearning": {"kge"}}

#: The one import against the order, with its reason. A folder holding a
#: partition saved by ``fedgraph partition`` is read by the partition's own
#: reader, imported when ``load_dataset`` meets such a folder (the reader,
#: its format registry and the RDF shard kind live in ``partition``).
ALLOWED = {("data/federated.py", "fedgraph.partition")}


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _violations() -> list[str]:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if len(rel.parts) < 2 or rel.parts[0] not in ORDER:
            continue
        level = ORDER.index(rel.parts[0])
        family = rel.parts[1] if rel.parts[0] == "federated" else None
        family = family if family in FAMILIES else None
        for line, name in _imports(path):
            parts = name.split(".")
            if parts[0] != "fedgraph" or len(parts) < 2 or parts[1] not in ORDER:
                continue
            if (rel.as_posix(), ".".join(parts[:2])) in ALLOWED:
                continue
            if ORDER.index(parts[1]) > level:
                bad.append(f"{rel}:{line} imports {name} (above {rel.parts[0]})")
            if parts[1] == "federated" and rel.parts[0] == "federated":
                sub = parts[2] if len(parts) > 2 and parts[2] in FAMILIES else None
                if rel.name == "__init__.py" and family is None:
                    continue  # the package's public names
                if sub and family is None:
                    bad.append(
                        f"{rel}:{line} imports {name} (the core imports no family)"
                    )
                elif sub and sub != family and sub not in FAMILIES[family]:
                    bad.append(f"{rel}:{line} imports {name} (family {family})")
    return bad


def test_no_package_imports_a_layer_above_it():
    assert _violations() == []


def test_the_check_sees_module_and_function_level_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "fedgraph"
    (pkg / "data").mkdir(parents=True)
    (pkg / "federated").mkdir()
    (pkg / "data" / "a.py").write_text("import fedgraph.runtime.loop\n")
    (pkg / "federated" / "b.py").write_text(
        "def f():\n    from fedgraph.federated.kge.fede import FedE\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", pkg)
    bad = _violations()
    assert any("data/a.py:1 imports fedgraph.runtime.loop" in b for b in bad)
    assert any("federated/b.py:2" in b and "core imports no family" in b for b in bad)


#: the modules that may define a module-level ``__getattr__``: packages whose
#: public names are imported on first use (PEP 562), so that a light
#: submodule (the process-lived Flower ``ClientApp`` of
#: :mod:`fedgraph.runtime.flower.node`) does not import torch, and the
#: package's own lazy exports. Each is API (its names are in ``__all__``),
#: not an old path kept alive.
LAZY_EXPORTS = {"__init__.py", "runtime/__init__.py", "runtime/flower/__init__.py"}


def _module_getattrs(root: Path) -> list[str]:
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
    )


def _star_imports(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root).as_posix()}:{node.lineno}"
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
    )


def test_no_module_getattr_besides_the_lazy_exports():
    found = _module_getattrs(ROOT)
    assert set(found) <= LAZY_EXPORTS
    assert "runtime/__init__.py" in found  # the check sees the real ones


def test_no_star_re_exports():
    assert _star_imports(ROOT) == []


def test_the_shim_checks_see_a_module_getattr_and_a_star_import(tmp_path):
    (tmp_path / "a.py").write_text("def __getattr__(name):\n    return name\n")
    (tmp_path / "b.py").write_text("from fedgraph.data import *\n")
    (tmp_path / "c.py").write_text("class C:\n    def __getattr__(self, n): ...\n")
    assert _module_getattrs(tmp_path) == ["a.py"]
    assert _star_imports(tmp_path) == ["b.py:1"]


@pytest.mark.parametrize(
    "old",
    [
        "fedgraph._moved",
        "fedgraph.federated.kge_setup",
        "fedgraph.partition.shard",
        "fedgraph.federated.records",
        "fedgraph.federated.kge.fusion",
        "fedgraph.runtime.kge_trainer",
    ],
)
def test_old_module_paths_are_gone(old):
    import importlib

    with pytest.raises(ModuleNotFoundError, match=f"No module named '{old}'"):
        importlib.import_module(old)


def test_moved_names_are_not_served_by_their_old_modules():
    from fedgraph.cli import train
    from fedgraph.federated.kge import client

    for module, name in [(client, "proximal_term"), (train, "load_trained_run")]:
        with pytest.raises(AttributeError):
            getattr(module, name)
