r"""The federated algorithms as their family modules declare them, read
from source (:mod:`ast`), without importing them or torch: what the command
line shows before anything heavy is imported (``fedgraph train --help``,
``--algorithm`` choices). The registry itself
(:mod:`fedgraph.federated.algorithms`) imports the modules; a test checks
that both views agree.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from fedgraph.registry import normalize_name

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


def _literal(node: Any, module: Any, path: Any) -> Any:
    if isinstance(node, ast.Name):  # a module constant, maybe imported
        for stmt in module.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = (
                    stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                )
                if any(isinstance(t, ast.Name) and t.id == node.id for t in targets):
                    return _literal(stmt.value, module, path)
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


__all__ = ["declared", "settings_help", "allowed_text", "FAMILIES"]
