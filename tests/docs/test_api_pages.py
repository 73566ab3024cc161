r"""The API pages document every public name, and no registry as a raw repr.

Read from the pages' autodoc directives (no documentation build): a name of
a package's ``__all__`` is documented when a directive names it, or names
the object it refers to where that object is defined, or an ``automodule``
with ``:members:`` lists it the way autodoc does (names of ``__all__`` that
``dir(module)`` shows: a name imported on first use through a module
``__getattr__`` is invisible to ``automodule`` and needs its own directive).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import fedgraph

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reference"
INDEX = DOCS / "api.md"
DIRECTIVE = re.compile(r"^\.\. (auto|py:)(\w+):: (\S+)\s*$")
OPTION = re.compile(r"^\s+:([\w-]+):(.*)$")


def api_pages() -> list[Path]:
    r"""The index page and the pages of its toctree."""
    tree = re.search(r"```\{toctree\}\n(.*?)```", INDEX.read_text(), re.S)
    lines = tree.group(1).splitlines() if tree else []
    entries = [e for e in lines if e and not e.startswith(":")]
    return [INDEX] + [DOCS / f"{entry}.md" for entry in entries]


def directives(pages: list[Path]) -> list[tuple[str, str, dict[str, str]]]:
    r"""``(kind, target, options)`` of every autodoc directive of ``pages``."""
    out: list[tuple[str, str, dict[str, str]]] = []
    for page in pages:
        in_options = False  # a directive's options end at its first blank line
        for line in page.read_text().splitlines():
            if m := DIRECTIVE.match(line):
                # a plain ``py:`` directive shows no value: its text is the page's
                shown = {} if m.group(1) == "auto" else {"no-value": ""}
                out.append((m.group(2), m.group(3), shown))
                in_options = True
            elif in_options and (m := OPTION.match(line)):
                out[-1][2][m.group(1)] = m.group(2).strip()
            else:
                in_options = False
    return out


def resolve(path: str) -> object:
    r"""The object at a dotted ``path`` (a module, or a name in one)."""
    module, _, name = path.rpartition(".")
    if module:
        parent = importlib.import_module(module)
        if hasattr(parent, name):  # a name in the package before its submodule
            return getattr(parent, name)
    return importlib.import_module(path)


def names(option: str) -> set[str]:
    return {n.strip() for n in option.split(",") if n.strip()}


def listed(target: str, options: dict[str, str]) -> list[str]:
    r"""The names an ``automodule`` directive's ``:members:`` may show: those
    listed (all: the ``__all__`` names that ``dir(module)`` shows), less
    ``:exclude-members:``."""
    if "members" not in options:
        return []
    module = importlib.import_module(target)
    chosen = names(options["members"]) or {
        n for n in getattr(module, "__all__", []) if n in dir(module)
    }
    return sorted(chosen - names(options.get("exclude-members", "")))


def module_members(target: str, options: dict[str, str]) -> list[str]:
    r"""The names an ``automodule`` directive surely documents: the classes and
    functions of :func:`listed`, without ``:undoc-members:`` only the
    documented ones. A constant does not count: autodoc skips one imported
    from another module, so it needs its own ``py:data`` directive."""
    module = importlib.import_module(target) if "members" in options else None
    undoc = "undoc-members" in options
    return [
        n
        for n in listed(target, options)
        if (inspect.isclass(obj := getattr(module, n)) or inspect.isroutine(obj))
        and (undoc or inspect.getdoc(obj))
    ]


def canonical(obj: object) -> str | None:
    r"""Where ``obj`` is defined (``module.qualname``), for a class or function."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}.{qualname}"
    return None


def documented() -> set[str]:
    r"""Every dotted path the API pages document, and each object's own path."""
    paths: set[str] = set()
    for kind, target, options in directives(api_pages()):
        if kind == "module":
            paths.update(f"{target}.{n}" for n in module_members(target, options))
        elif "module" in options:  # ``.. py:data:: name`` with ``:module: path``
            paths.add(f"{options['module']}.{target}")
        else:
            paths.add(target)
    paths.update(c for p in list(paths) if (c := canonical(resolve(p))))
    return paths


def packages() -> list[ModuleType]:
    r"""fedgraph and each of its sub-packages that declares ``__all__``."""
    found = [fedgraph]
    for info in pkgutil.walk_packages(fedgraph.__path__, "fedgraph."):
        if info.ispkg:
            module = importlib.import_module(info.name)
            if hasattr(module, "__all__"):
                found.append(module)
    return found


def test_every_public_name_is_on_the_api_pages():
    paths = documented()
    missing = [
        f"{pkg.__name__}.{name}"
        for pkg in packages()
        for name in pkg.__all__
        if f"{pkg.__name__}.{name}" not in paths
        and canonical(getattr(pkg, name)) not in paths
    ]
    assert missing == []


def test_the_packages_checked_include_the_lazy_ones():
    checked = {pkg.__name__ for pkg in packages()}
    assert {"fedgraph", "fedgraph.data", "fedgraph.runtime"} <= checked
    assert "fedgraph.runtime.flower" in checked
    assert "run_simulation" not in dir(importlib.import_module("fedgraph.runtime"))


def test_no_registry_is_shown_as_a_raw_repr():
    shown = []
    for kind, target, options in directives(api_pages()):
        if kind == "module":
            targets = [f"{target}.{n}" for n in listed(target, options)]
        elif kind == "data" and "no-value" not in options:
            targets = [target]
        else:
            targets = []
        shown += [t for t in targets if isinstance(resolve(t), (list, dict))]
    assert shown == []


def test_every_api_page_is_in_the_index_toctree():
    pages = {p.name for p in (DOCS / "api").glob("*.md")}
    assert pages == {p.name for p in api_pages()[1:]}
    assert len(pages) >= 10


def test_the_values_written_on_the_pages_are_the_codes():
    written = {
        f"{options.get('module', '')}.{target}".lstrip("."): options["value"]
        for _, target, options in directives(api_pages())
        if "value" in options
    }
    assert written == {
        "fedgraph.models.kge.HEAD_BATCH": '"head-batch"',
        "fedgraph.models.kge.TAIL_BATCH": '"tail-batch"',
        "fedgraph.eval.DIRECTIONS": '("head", "tail")',
        "fedgraph.eval.KS": "(1, 3, 5, 10)",
        "fedgraph.models.text.ENCODER": '"encoder."',
    }
    for path, value in written.items():
        assert ast.literal_eval(value) == resolve(path)
