r"""The modules of fedgraph import one another without a cycle, and no module
imports a private (underscore) name of another.

Imports are read with :mod:`ast`, at module level and inside functions (a
lazy import does not hide a cycle), relative imports resolved;
``from package import name`` counts as an import of the submodule ``name``
when there is one, else of the package. A package and its own submodules
may import each other (the package re-exports its submodules' names, a
submodule reads the package's registry): that pattern is not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fedgraph"


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _owner(name: str, mods: dict[str, Path]) -> str | None:
    r"""The module that ``name`` (a module or a name in one) lives in."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.AST, mod: str, is_pkg: bool) -> list[tuple[str, str | None]]:
    r"""``(imported module or name, the name taken from it)`` of one import."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    src = node.module or ""
    if node.level:
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        src = ".".join(base + ([node.module] if node.module else []))
    return [(f"{src}.{a.name}", a.name) for a in node.names]


def import_graph(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    r"""The import edges between the modules under ``root`` and the private
    names imported across modules (``"importer <- module.name"``)."""
    mods = _modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target, name in _targets(node, mod, is_pkg):
                owner = _owner(target, mods)
                if owner is None or owner == mod:
                    continue
                edges[mod].add(owner)
                taken = name if owner != target else None
                if taken and taken.startswith("_") and not taken.startswith("__"):
                    private.append(f"{mod} <- {owner}.{taken}")
    return edges, sorted(private)


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    r"""The strongly connected components (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def import_cycles(root: Path) -> list[list[str]]:
    r"""The import cycles among the modules under ``root``, less those made
    only of a package and its own submodules."""
    mods = _modules(root)

    def package_only(comp: list[str]) -> bool:
        pkgs = [m for m in comp if mods[m].name == "__init__.py"]
        return len(pkgs) == 1 and all(
            m == pkgs[0] or m.startswith(pkgs[0] + ".") for m in comp
        )

    edges, _ = import_graph(root)
    return [c for c in _components(edges) if len(c) > 1 and not package_only(c)]


def test_no_import_cycle_between_modules():
    assert import_cycles(ROOT) == []


def test_no_private_name_imported_across_modules():
    assert import_graph(ROOT)[1] == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "fedgraph" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "fedgraph"


def test_the_check_sees_a_cycle_through_a_function_level_import(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from fedgraph.a.x import f\n",
            "a/x.py": "def f():\n    from fedgraph.b import g\n",
            "b/__init__.py": "from .y import g\n",
            "b/y.py": "from fedgraph.a import x\ndef g(): ...\n",
        },
    )
    assert import_cycles(pkg) == [["fedgraph.a.x", "fedgraph.b", "fedgraph.b.y"]]


def test_the_check_allows_a_package_and_its_own_submodules(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "p/__init__.py": "from fedgraph.p.m import f\nREGISTRY = {}\n",
            "p/m.py": "def f():\n    from fedgraph.p import REGISTRY\n",
        },
    )
    assert import_cycles(pkg) == []


def test_the_check_sees_private_names_but_not_private_submodules(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "def _hidden(): ...\n__version__ = '1'\n",
            "b.py": "from fedgraph.a import _hidden, __version__\n",
            "c.py": "from . import a\nfrom .a import _hidden as h\n",
            "d/__init__.py": "from fedgraph.d import _impl\n",
            "d/_impl.py": "",
        },
    )
    assert import_graph(pkg)[1] == [
        "fedgraph.b <- fedgraph.a._hidden",
        "fedgraph.c <- fedgraph.a._hidden",
    ]
