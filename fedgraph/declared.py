r"""The federated algorithms and the pluggable parts (KGE models, losses,
negative samplers, partitioners) as their modules declare them, read from
source (:mod:`ast`), without importing them or torch: what the command line
shows before anything heavy is imported (``fedgraph train --help``,
``--algorithm``, ``--model`` and ``--sampler`` choices, ``--model-kwargs``).
The registries themselves (:mod:`fedgraph.federated.algorithms`,
:class:`fedgraph.registry.Registry`) import the modules; tests check that
both views agree.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from fedgraph.registry import KINDS, Kind, argument_help, normalize_name

FAMILIES = ("kge", "rgcn", "text")


def allowed_text(default: Any, meta: Any) -> str:
    r"""The allowed values of a setting with ``default`` and the
    :func:`~fedgraph.federated.algorithms.setting` metadata ``meta``."""
    if meta.get("choices"):
        return " | ".join(str(c) for c in meta["choices"])
    kind = {bool: "true or false", int: "an integer", float: "a number"}.get(
        type(default), "a string"
    )
    low, high = meta.get("low"), meta.get("high")
    if low is None and high is None:
        return kind
    if high is None:
        return f"{kind} {'>' if meta.get('low_open') else '>='} {low:g}"
    if low is None:
        return f"{kind} {'<' if meta.get('high_open') else '<='} {high:g}"
    lo = "(" if meta.get("low_open") else "["
    hi = ")" if meta.get("high_open") else "]"
    return f"{kind} in {lo}{low:g}, {high:g}{hi}"


# ----------------------------------------------------------------- declared
# The command line answers ``--help`` without importing torch, so it reads
# the same declarations from the family modules' source (their
# ``ALGORITHMS`` entries and settings dataclasses) instead of importing them;
# ``tests/federated/test_algorithms.py`` checks that both views agree.

_PACKAGE = Path(__file__).resolve().parent / "federated"


def assigned_value(module: ast.Module, name: str) -> ast.expr | None:
    r"""The expression assigned to the module-level ``name`` in ``module``'s
    syntax tree (plain or annotated assignment), :obj:`None` without one."""
    for stmt in module.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return value
    return None


def source_constant(module: str, name: str) -> tuple[Any, ...]:
    r"""The module-level tuple ``name`` of ``module`` (``"fedgraph.…"``) as
    written in its source (the keys, in order, where it is a dict), read
    without importing the module."""
    path = _ROOT.joinpath(*module.split(".")).with_suffix(".py")
    value = assigned_value(ast.parse(path.read_text()), name)
    if value is None:
        raise ValueError(f"{path}: no module-level `{name}`")
    if isinstance(value, ast.Dict):
        return tuple(ast.literal_eval(k) for k in value.keys if k)
    return tuple(ast.literal_eval(value))


def _literal(node: Any, module: Any, path: Any) -> Any:
    if isinstance(node, ast.Name):  # a module constant, maybe imported
        value = assigned_value(module, node.id)
        if value is not None:
            return _literal(value, module, path)
        for stmt in module.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module:
                if any((a.asname or a.name) == node.id for a in stmt.names):
                    parts = stmt.module.split(".")
                    src = _PACKAGE.parent.parent.joinpath(*parts).with_suffix(".py")
                    other = ast.parse(src.read_text())
                    return _literal(ast.Name(id=node.id), other, src)
        raise ValueError(f"{path}: cannot read {node.id!r}")
    return ast.literal_eval(node)


def _declarations(family: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    classes: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    folder = _PACKAGE / family
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        module = ast.parse(path.read_text())
        for stmt in module.body:
            if isinstance(stmt, ast.ClassDef):
                fields = []
                for item in stmt.body:
                    call = getattr(item, "value", None)
                    if (
                        isinstance(item, ast.AnnAssign)
                        and isinstance(call, ast.Call)
                        and getattr(call.func, "id", "") == "setting"
                    ):
                        meta = {
                            k.arg: _literal(k.value, module, path)
                            for k in call.keywords
                        }
                        fields.append({
                            "name": item.target.id,  # type: ignore[attr-defined]
                            "default": _literal(call.args[0], module, path),
                            "help": _literal(call.args[1], module, path),
                            **meta,
                        })  # fmt: skip
                bases = [b.id for b in stmt.bases if isinstance(b, ast.Name)]
                classes[stmt.name] = (bases, fields)
            value = getattr(stmt, "value", None)
            target = getattr(stmt, "targets", [None])[0]
            if getattr(target, "id", "") == "ALGORITHMS" and isinstance(
                value, ast.List
            ):
                for call in value.elts:
                    args = list(call.args)  # type: ignore[attr-defined]
                    kw = {k.arg: k.value for k in call.keywords}  # type: ignore[attr-defined]
                    settings = args[4] if len(args) > 4 else kw.get("settings")
                    entries.append({
                        "name": normalize_name(_literal(args[0], module, path)),
                        "family": _literal(args[1], module, path),
                        "summary": _literal(args[2], module, path),
                        "settings_class": getattr(settings, "id", "NoSettings"),
                    })  # fmt: skip
    return entries, classes


def _fields_of(name: str, classes: dict[str, Any]) -> list[dict[str, Any]]:
    if name not in classes:
        return []
    bases, own = classes[name]
    out: dict[str, dict[str, Any]] = {}
    for base in reversed(bases):  # dataclass order: the last base first
        out.update({f["name"]: f for f in _fields_of(base, classes)})
    out.update({f["name"]: f for f in own})
    return list(out.values())


def declared(family: str | None = None) -> list[dict[str, Any]]:
    r"""The registered algorithms as the family modules declare them, read
    from their source without importing them (so without torch): one
    ``{"name", "family", "summary", "settings"}`` per algorithm, sorted by
    family and name; ``settings`` lists ``{"name", "default", "help", …}``
    (the :func:`setting` arguments)."""
    out = []
    for fam in FAMILIES if family is None else (family,):
        entries, classes = _declarations(fam)
        for e in entries:
            fields = _fields_of(e.pop("settings_class"), classes)
            out.append({**e, "settings": fields})
    return sorted(out, key=lambda e: (e["family"], e["name"]))


def settings_help(family: str | None = None) -> str:
    r"""One paragraph: each algorithm's settings with default and allowed
    values (``fedgraph train --help`` for ``--set``)."""
    parts = []
    for alg in declared(family):
        items = [
            f"{f['name']} ({f['default']!r}; {allowed_text(f['default'], f)})"
            for f in alg["settings"]
        ]
        if items:
            parts.append(f"{alg['family']}/{alg['name']}: " + ", ".join(items))
    return "; ".join(parts).replace("'", "")


# -------------------------------------------------------------- components
# The pluggable parts of :data:`fedgraph.registry.KINDS`, read the way
# :func:`fedgraph.registry.discover` imports them: the concrete subclasses of
# the kind's base that the public modules of its source list in ``__all__``.

_ROOT = Path(__file__).resolve().parent.parent


def _source_files(kind: Kind) -> list[tuple[str, Path]]:
    path = _ROOT.joinpath(*kind.source.split("."))
    if not path.is_dir():
        return [(kind.source, path.with_suffix(".py"))]
    return [
        (f"{kind.source}.{p.stem}", p)
        for p in sorted(path.glob("*.py"), key=lambda p: p.stem)
        if not p.name.startswith("_")
    ]


def _class_table(kind: Kind) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    r"""Class name → ``(ClassDef, module AST, path, module name)`` of every
    top-level class of the kind's modules, and the ``(module, name)`` pairs
    their ``__all__`` lists, in order."""
    table: dict[str, Any] = {}
    listed: list[tuple[str, str]] = []
    for module_name, path in _source_files(kind):
        module = ast.parse(path.read_text())
        for stmt in module.body:
            if isinstance(stmt, ast.ClassDef):
                table[stmt.name] = (stmt, module, path, module_name)
            target = getattr(stmt, "targets", [None])[0]
            if getattr(target, "id", "") == "__all__":
                names = _literal(stmt.value, module, path)  # type: ignore[attr-defined]
                listed += [(module_name, n) for n in names]
    return table, listed


def _bases(node: ast.ClassDef) -> list[str]:
    return [b.id for b in node.bases if isinstance(b, ast.Name)]


def _inherits(name: str, base: str, table: dict[str, Any]) -> bool:
    r"""Whether class ``name`` of the table derives from ``base`` (through
    classes of the table, abstract ones included)."""
    if name not in table:
        return False
    parents = _bases(table[name][0])
    return base in parents or any(_inherits(b, base, table) for b in parents)


def _abstract_methods(name: str, table: dict[str, Any]) -> set[str]:
    r"""The abstract methods class ``name`` leaves unimplemented: those its
    bases in the table leave, less the ones it defines, plus its own
    ``@abstractmethod`` ones (what :func:`inspect.isabstract` reads)."""
    if name not in table:
        return set()
    node = table[name][0]
    left: set[str] = set()
    for base in _bases(node):
        left |= _abstract_methods(base, table)
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            marks = [
                getattr(d, "id", getattr(d, "attr", "")) for d in item.decorator_list
            ]
            if "abstractmethod" in marks:
                left.add(item.name)
            else:
                left.discard(item.name)
    return left


def _is_component(name: str, kind: Kind, table: dict[str, Any]) -> bool:
    if name == kind.base or name not in table:
        return False
    return _inherits(name, kind.base, table) and not _abstract_methods(name, table)


def _init_defaults(name: str, table: dict[str, Any]) -> dict[str, Any]:
    r"""Argument → default of the ``__init__`` that class ``name`` uses (its
    own or the first base's that the table holds), followed, where it takes
    ``**kwargs``, by its first base's (as
    :func:`fedgraph.registry.constructor_parameters` reads them)."""
    if name not in table:
        return {}
    node, module, path, _ = table[name]
    bases = [b for b in _bases(node) if b in table]
    init = next((f for f in node.body if getattr(f, "name", "") == "__init__"), None)
    if init is None:
        return _init_defaults(bases[0], table) if bases else {}
    a = init.args
    positional = a.posonlyargs + a.args
    pairs = list(
        zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True)
    )
    pairs = [(arg, d) for arg, d in pairs if arg not in a.posonlyargs]
    pairs += [
        (arg, d)
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
        if d is not None
    ]
    out = {arg.arg: _literal(d, module, path) for arg, d in pairs}
    if a.kwarg is not None and bases:
        for key, value in _init_defaults(bases[0], table).items():
            out.setdefault(key, value)
    return out


def _class_attribute(node: ast.ClassDef, attr: str, module: Any, path: Any) -> Any:
    for stmt in node.body:
        targets = getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]
        if any(getattr(t, "id", "") == attr for t in targets) and stmt.value:  # type: ignore[attr-defined]
            return _literal(stmt.value, module, path)  # type: ignore[attr-defined]
    return None


def _argument_help(name: str, table: dict[str, Any]) -> dict[str, str]:
    r"""The ``Args:`` of class ``name``'s docstring and, for the arguments
    it leaves out, of its bases' (as
    :func:`fedgraph.registry.class_argument_help` reads them)."""
    node = table[name][0]
    out = argument_help(ast.get_docstring(node) or "")
    for base in (b for b in _bases(node) if b in table):
        for key, text in _argument_help(base, table).items():
            out.setdefault(key, text)
    return out


def declared_components(kind: str | Kind) -> list[dict[str, Any]]:
    r"""The classes of a :class:`~fedgraph.registry.Kind` (or its name in
    :data:`~fedgraph.registry.KINDS`) read from source without importing
    them: one ``{"name", "aliases", "class", "module", "kwargs", "help"}``
    per class, in registry order, as
    :meth:`fedgraph.registry.Registry.describe` gives them."""
    kind = KINDS[kind] if isinstance(kind, str) else kind
    table, listed = _class_table(kind)
    fixed = dict(kind.fixed)
    out = []
    for module_name, name in listed:
        if table.get(name, (None,) * 4)[3] != module_name:
            continue
        if not _is_component(name, kind, table):
            continue
        node, module, path, _ = table[name]
        own_name = _class_attribute(node, "name", module, path)
        kwargs = {
            k: v for k, v in _init_defaults(name, table).items() if k not in fixed
        }
        doc = _argument_help(name, table)
        out.append({
            "name": own_name if isinstance(own_name, str)
            else normalize_name(name, kind.suffix),
            "aliases": tuple(_class_attribute(node, "aliases", module, path) or ()),
            "class": name,
            "module": module_name,
            "kwargs": kwargs,
            "help": {k: doc.get(k, "") for k in kwargs},
        })  # fmt: skip
    return out


def component_names(kind: str) -> tuple[str, ...]:
    r"""The registry names of a kind, read from source (the command line's
    choices)."""
    return tuple(c["name"] for c in declared_components(kind))


def kwargs_help(kind: str) -> str:
    r"""One paragraph: each class's keyword arguments with their defaults
    (``fedgraph train --help`` for ``--model-kwargs``)."""
    parts = []
    for c in declared_components(kind):
        items = [f"{k} ({v!r})" for k, v in c["kwargs"].items()]
        parts.append(f"{c['name']}: {', '.join(items) if items else 'none'}")
    return "; ".join(parts).replace("'", "")


__all__ = [
    "declared",
    "declared_components",
    "component_names",
    "source_constant",
    "assigned_value",
    "kwargs_help",
    "settings_help",
    "allowed_text",
    "FAMILIES",
]
