r"""The registry of federated algorithms and their typed settings.

Every algorithm is one :class:`Algorithm` entry: a name, a family
(``"kge"``, ``"rgcn"`` or ``"text"``), a builder and a settings dataclass
whose fields are declared with :func:`setting` (default, help, valid range
or choices). The registry is filled by importing every module of the family
packages (``fedgraph.federated.kge``, …) and collecting their module-level
``ALGORITHMS`` lists, so a new method is one new file in its family package:
``fedgraph train --help``, ``--set`` validation, the Flower run config
(``extra.KEY`` and ``set``) and :func:`docs_table` are all derived from it.

Names are normalised in one place (:func:`normalize`): case, ``-`` and
``_`` are ignored (``"Fed-Adam"`` is ``"fedadam"``).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fedgraph.declared import allowed_text
from fedgraph.registry import normalize_name

#: The algorithm families, each a sub-package of :mod:`fedgraph.federated`.
FAMILIES = ("kge", "rgcn", "text")


def normalize(name: str) -> str:
    r"""The registry key of an algorithm name (case, ``-``, ``_`` and spaces
    ignored)."""
    return normalize_name(str(name))


def setting(
    default: Any,
    help: str,
    *,
    choices: Iterable[Any] | None = None,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    legacy: str | None = None,
) -> Any:
    r"""A field of an algorithm's settings dataclass.

    Args:
        default: the default value; its type is the setting's type (``bool``,
            ``int``, ``float`` or ``str``).
        help (str): one line for ``--help`` and the docs.
        choices (Iterable, optional): the allowed values.
        low, high (float, optional): the allowed range (closed unless
            ``low_open``/``high_open``).
        legacy (str, optional): the :class:`~fedgraph.federated.kge.setup.KGESettings`
            field that held this setting before it was the algorithm's (e.g.
            ``proximal_mu``, set by ``--proximal-mu`` and the Flower key
            ``proximal-mu``): read from there, then ``--set``/``extra`` wins.
    """
    meta = {
        "help": help,
        "choices": tuple(choices) if choices is not None else None,
        "low": low,
        "high": high,
        "low_open": low_open,
        "high_open": high_open,
        "legacy": legacy,
    }
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class NoSettings:
    r"""The settings of an algorithm that has none of its own."""


@dataclass(frozen=True)
class Algorithm:
    r"""One registered federated algorithm.

    Args:
        name (str): the registry key (normalised, e.g. ``"fedadam"``).
        family (str): ``"kge"``, ``"rgcn"`` or ``"text"``.
        summary (str): one line for listings and the docs table.
        build (Callable): the family's builder; for ``"kge"``
            ``build(fed, kge_settings, settings) -> (strategy, clients)``.
        settings (type): a dataclass whose fields come from :func:`setting`.
        reference (str, optional): the paper.
    """

    name: str
    family: str
    summary: str
    build: Callable[..., Any]
    settings: type = NoSettings
    reference: str = ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(
                f"`family` must be one of {FAMILIES} (got {self.family!r})"
            )
        if normalize(self.name) != self.name:
            raise ValueError(f"`name` must be normalised (got {self.name!r})")

    def fields(self) -> tuple[dataclasses.Field, ...]:
        return dataclasses.fields(self.settings)

    def defaults(self) -> dict[str, Any]:
        r"""Setting name → default."""
        return {f.name: f.default for f in self.fields()}

    def parse(
        self, values: Mapping[str, Any], legacy: Any = None, what: str = ""
    ) -> Any:
        r"""The settings instance from ``values`` (unknown keys raise; each
        value is cast and range-checked, :func:`check_value`); settings with a
        ``legacy`` field are read from the object ``legacy`` first."""
        check_keys(values, self)
        out = {}
        for f in self.fields():
            value = f.default
            old = f.metadata.get("legacy")
            if old and legacy is not None and hasattr(legacy, old):
                value = getattr(legacy, old)
            if f.name in values:
                value = values[f.name]
            out[f.name] = check_value(self.name, f, value, what)
        return self.settings(**out)


_REGISTRY: dict[tuple[str, str], Algorithm] = {}
_LOADED: set[str] = set()


def _load(family: str) -> None:
    if family in _LOADED:
        return
    _LOADED.add(family)
    try:
        package = importlib.import_module(f"fedgraph.federated.{family}")
    except ModuleNotFoundError as exc:
        if exc.name == f"fedgraph.federated.{family}":
            return  # a family without algorithms yet
        raise
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for alg in getattr(module, "ALGORITHMS", ()):
            register(alg)


def register(alg: Algorithm) -> Algorithm:
    r"""Adds ``alg`` (a second algorithm of the same family under the same
    name raises; families may share names, e.g. FedProx for KGE and R-GCN)."""
    key = (alg.family, alg.name)
    known = _REGISTRY.get(key)
    if known is not None and known is not alg:
        raise ValueError(f"Algorithm {alg.name!r} ({alg.family}) is registered twice")
    _REGISTRY[key] = alg
    return alg


def algorithms(family: str | None = None) -> dict[str, Algorithm]:
    r"""The algorithms of ``family``, name → :class:`Algorithm`, sorted; with
    no family, all of them keyed ``"family/name"``."""
    for fam in FAMILIES:
        _load(fam)
    if family is not None:
        if family not in FAMILIES:
            raise ValueError(f"`family` must be one of {FAMILIES} (got {family!r})")
        return {n: a for (f, n), a in sorted(_REGISTRY.items()) if f == family}
    return {f"{f}/{n}": a for (f, n), a in sorted(_REGISTRY.items())}


def get(name: str | Algorithm, family: str | None = None) -> Algorithm:
    r"""The algorithm named ``name`` (normalised) in ``family`` (default: the
    one family that has it), or a :class:`ValueError` listing the choices."""
    if isinstance(name, Algorithm):
        return name
    key = normalize(name)
    found = [a for a in algorithms(family).values() if a.name == key]
    if not found:
        known = sorted({a.name for a in algorithms(family).values()})
        raise ValueError(f"Could not resolve '{name}' among choices {known}")
    if len(found) > 1:
        families = [a.family for a in found]
        raise ValueError(
            f"'{name}' is an algorithm of several families {families}: name the "
            "family (e.g. --model rgcn for R-GCN)"
        )
    return found[0]


def _kind(f: dataclasses.Field) -> type:
    return type(f.default)


def allowed(f: dataclasses.Field) -> str:
    r"""The allowed values of a setting, in words (``"sum | entity-mean"``,
    ``"a number in [0, 1]"``…)."""
    return allowed_text(f.default, f.metadata)


def cast_setting(what: str, value: Any, default: Any) -> Any:
    r"""``value`` as the type of ``default`` (``bool``, ``int``, ``float`` or
    ``str``; an integral float is accepted for an ``int``, as TOML and JSON
    may write ``20.0``), or a :class:`ValueError` that starts with ``what``."""
    kind = type(default)
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{what} must be a boolean (got {value!r})")
        return value
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{what} must be a number (got {value!r})")
        if kind is int and float(value) != int(value):
            raise ValueError(f"{what} must be an integer (got {value!r})")
        return kind(value)
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string (got {value!r})")
    return value


def check_value(
    algorithm: str, f: dataclasses.Field, value: Any, what: str = ""
) -> Any:
    r"""``value`` cast to the setting's type and checked against its range
    or choices; a one-line :class:`ValueError` names the key, the algorithm
    and the allowed values."""
    what = what or f"{algorithm} setting {f.name!r}"
    value = cast_setting(what, value, f.default)
    m = f.metadata
    ok = True
    if m.get("choices") and value not in m["choices"]:
        ok = False
    low, high = m.get("low"), m.get("high")
    if low is not None and (value <= low if m.get("low_open") else value < low):
        ok = False
    if high is not None and (value >= high if m.get("high_open") else value > high):
        ok = False
    if not ok:
        raise ValueError(f"{what} must be {allowed(f)} (got {value!r})")
    return value


def setting_owners(key: str, family: str | None = None) -> list[str]:
    r"""The algorithms (of ``family``) that declare the setting ``key``."""
    return sorted({a.name for a in algorithms(family).values() if key in a.defaults()})


def known_settings(family: str | None = None) -> list[str]:
    r"""Every setting some algorithm declares."""
    return sorted({k for a in algorithms(family).values() for k in a.defaults()})


def check_keys(
    values: Mapping[str, Any],
    algorithm: str | Algorithm | None = None,
    family: str | None = None,
) -> None:
    r"""Raises a :class:`ValueError` naming the first key of ``values`` that
    no algorithm (of ``family``) declares, or, with ``algorithm``, that
    ``algorithm`` does not declare (a mistyped ``--set mu_distil=1`` is never
    ignored)."""
    alg = None if algorithm is None else get(algorithm, family)
    family = family if alg is None else alg.family
    known = known_settings(family) if alg is None else sorted(alg.defaults())
    for key in values:
        if key in known:
            continue
        if alg is None:
            raise ValueError(f"Unknown algorithm setting {key!r} (known: {known})")
        owners = setting_owners(key, family)
        listed = ", ".join(known) if known else "none"
        name = alg.name
        if owners:
            raise ValueError(
                f"{name} has no setting {key!r} (a setting of "
                f"{', '.join(owners)}); {name}'s settings: {listed}"
            )
        raise ValueError(
            f"Unknown algorithm setting {key!r}; {name}'s settings: {listed}"
        )


def parse_assignments(items: Iterable[str], what: str = "`--set`") -> dict[str, Any]:
    r"""``["KEY=VALUE", …]`` → ``{KEY: VALUE}`` (a value is read as JSON
    when it parses, e.g. ``2``, ``0.5``, ``true``; else as a string)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} expects KEY=VALUE (got {item!r})")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def settings_help(family: str | None = None) -> str:
    r"""One paragraph: each algorithm's settings with default and allowed
    values (``fedgraph train --help`` for ``--set``)."""
    parts = []
    for key, alg in algorithms(family).items():
        items = [f"{f.name} ({f.default!r}; {allowed(f)})" for f in alg.fields()]
        if items:
            parts.append(f"{key}: " + ", ".join(items))
    return "; ".join(parts).replace("'", "")


def docs_table(family: str | None = None) -> str:
    r"""A Markdown table of the registered algorithms and their settings
    (one row per setting; an algorithm without settings gets one row)."""
    rows = [
        "| algorithm | family | setting | default | allowed | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for alg in algorithms(family).values():
        fields = alg.fields()
        if not fields:
            rows.append(f"| {alg.name} | {alg.family} | | | | {alg.summary} |")
        for f in fields:
            rows.append(
                f"| {alg.name} | {alg.family} | `{f.name}` | `{f.default!r}` | "
                f"{allowed(f).replace('|', '/')} | {f.metadata['help']} |"
            )
    return "\n".join(rows)


__all__ = [
    "FAMILIES",
    "Algorithm",
    "NoSettings",
    "setting",
    "register",
    "algorithms",
    "get",
    "normalize",
    "allowed",
    "cast_setting",
    "check_value",
    "check_keys",
    "setting_owners",
    "known_settings",
    "parse_assignments",
    "settings_help",
    "docs_table",
]
