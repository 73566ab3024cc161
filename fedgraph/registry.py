r"""One resolver for every registry (models, losses, partitioners, strategies…).

Modelled on PyG's ``torch_geometric/resolver.py``: a name is matched against
the class names of an explicit list, ignoring case, ``-`` and ``_``, and
optionally a common suffix (``"transe"`` finds ``TransE``, ``"fed-e"`` finds
``FedE``, ``"random"`` finds ``RandomRelationPartitioner`` when the suffix is
``"RelationPartitioner"``).

Every pluggable part is a :class:`Kind` of :data:`KINDS` (KGE models,
losses, negative samplers, partitioners, training regimes): its classes are
found by module, not listed by hand, so a new one is one new file. :class:`Registry` is the
imported view (the classes, resolved and built with checked keyword
arguments); :func:`fedgraph.declared.declared_components` reads the same
classes from source, without importing torch, for ``--help``; a test checks
that both agree.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

T = TypeVar("T")


def normalize_name(name: str, suffix: str = "") -> str:
    r"""Lower-cases ``name`` and drops ``-``, ``_``, spaces and ``suffix``."""
    out = name.lower().replace("-", "").replace("_", "").replace(" ", "")
    suffix = normalize_name(suffix) if suffix else ""
    if suffix and out.endswith(suffix) and out != suffix:
        out = out[: -len(suffix)]
    return out


def resolve(
    query: Any,
    choices: Sequence[type[T]],
    *args: Any,
    suffix: str = "",
    aliases: dict[str, type[T]] | None = None,
    **kwargs: Any,
) -> T:
    r"""Resolves ``query`` to an instance of one of ``choices``.

    Args:
        query (str or object): a name, a class in ``choices`` or an instance
            (returned as is).
        choices (Sequence[type]): the registry, an explicit list of classes.
        *args: positional arguments for the constructor.
        suffix (str, optional): a class-name suffix that may be left out of
            ``query``. (default: :obj:`""`)
        aliases (dict, optional): extra names, e.g. ``{"r3": FedLUR3}``.
        **kwargs: keyword arguments for the constructor.

    Raises:
        ValueError: if ``query`` matches no choice; the message lists them.
    """
    cls = resolve_class(query, choices, suffix=suffix, aliases=aliases)
    if not isinstance(cls, type):  # an instance was given
        return cls
    return cls(*args, **kwargs)


def resolve_class(
    query: Any,
    choices: Sequence[type[T]],
    *,
    suffix: str = "",
    aliases: dict[str, type[T]] | None = None,
) -> Any:
    r"""Like :func:`resolve` but returns the class (or the given instance)."""
    if isinstance(query, type) and query in choices:
        return query
    if not isinstance(query, str):
        if any(isinstance(query, c) for c in choices):
            return query
        raise ValueError(f"Could not resolve {query!r} among choices {names(choices)}")
    key = normalize_name(query, suffix)
    for alias, cls in (aliases or {}).items():
        if normalize_name(alias, suffix) == key:
            return cls
    for cls in choices:
        if normalize_name(cls.__name__, suffix) == key:
            return cls
    known = names(choices)
    if aliases:  # the short names first: those are what a command line takes
        known = [*aliases, *known]
    raise ValueError(f"Could not resolve '{query}' among choices {known}")


def names(choices: Iterable[type]) -> list[str]:
    r"""The class names of a registry, for messages and ``fedgraph ls``."""
    return [c.__name__ for c in choices]


def resolve_device(value: Any, what: str = "`device`") -> str:
    r"""Checks a device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``…) before
    anything is built on it: a :class:`ValueError` starting with ``what`` for
    a non-string, an unknown device type, or CUDA where this machine has none.
    Returns the name."""
    import torch

    if not isinstance(value, str) or not value:
        raise ValueError(
            f"{what} must be a device name such as 'cpu' or 'cuda' (got {value!r})"
        )
    try:
        device = torch.device(value)
    except RuntimeError as exc:
        raise ValueError(f"{what}: {exc}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{what} is {value!r} but this machine has no CUDA device")
    return value


# ------------------------------------------------------------------ kinds


@dataclass(frozen=True)
class Kind:
    r"""A kind of pluggable part and where its classes live.

    Args:
        name (str): ``"model"``, ``"loss"``, ``"sampler"``,
            ``"partitioner"``, ``"regime"`` or ``"regularizer"``.
        source (str): the package whose public modules (names not starting
            with ``_``) hold the classes, or one module.
        base (str): the base class: the registry holds its concrete
            subclasses that the modules list in ``__all__``.
        suffix (str, optional): a class-name suffix a name may leave out.
            (default: :obj:`""`)
        fixed (tuple, optional): ``(argument, where it is set)`` pairs: the
            constructor arguments with a default that the caller passes
            itself, so they are no keyword arguments of the user's
            (``seed``, set by ``--seed``). (default: :obj:`()`)
        kwargs_name (str, optional): how messages name the user's keyword
            arguments. (default: ``"`kwargs`"``)
    """

    name: str
    source: str
    base: str
    suffix: str = ""
    fixed: tuple[tuple[str, str], ...] = ()
    kwargs_name: str = "`kwargs`"


#: The kinds of pluggable parts found by module (the federated algorithms
#: have their own registry, :mod:`fedgraph.federated.algorithms`).
KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "model",
            "fedgraph.models.kge",
            "KGEModel",
            fixed=(("gamma", "the run's `gamma` (--gamma)"),),
            kwargs_name="`model_kwargs`",
        ),
        Kind("loss", "fedgraph.models.losses", "KGELoss", suffix="Loss"),
        Kind(
            "sampler",
            "fedgraph.models.samplers",
            "NegativeSampler",
            suffix="NegativeSampler",
            fixed=(
                ("shared", "the run's `shared_negatives` (--per-positive-negatives)"),
                ("triples", "the client's training triples"),
                ("filter_triples", "the client's training triples"),
                ("num_relations", "the client's graph"),
            ),
            kwargs_name="`sampler_kwargs`",
        ),
        Kind(
            "partitioner",
            "fedgraph.partition",
            "Partitioner",
            suffix="Partitioner",
            fixed=(("seed", "the partition's `seed` (--seed)"),),
            kwargs_name="`partition_kwargs`",
        ),
        Kind(
            "regime",
            "fedgraph.training.regimes",
            "TrainingRegime",
            kwargs_name="`regime_kwargs`",
        ),
        Kind(
            "regularizer",
            "fedgraph.training.regimes.regularizers",
            "Regularizer",
            suffix="Regularizer",
        ),
    )
}


def component_name(cls: type, suffix: str = "") -> str:
    r"""The registry name of ``cls``: its own class attribute ``name``, else
    its class name normalised without ``suffix`` (``TransE`` → ``"transe"``)."""
    own = cls.__dict__.get("name")
    return own if isinstance(own, str) else normalize_name(cls.__name__, suffix)


def argument_help(doc: str) -> dict[str, str]:
    r"""``argument → text`` of the ``Args:`` section of a Google-style
    docstring, without the trailing ``(default: …)``."""
    out: dict[str, str] = {}
    section = re.search(r"^([ \t]*)Args:\n(.*?)(?:\n\s*\n|\Z)", doc, re.S | re.M)
    if section is None:
        return out
    key = ""
    for line in section.group(2).splitlines():
        m = re.match(r"\s*\**(\w+)(?: \([^)]*\))?: ?(.*)", line)
        if m and len(line) - len(line.lstrip()) <= len(section.group(1)) + 4:
            key = m.group(1)
            out[key] = m.group(2).strip()
        elif key:
            out[key] = f"{out[key]} {line.strip()}".strip()
    return {k: re.sub(r"\s*\(default:.*$", "", v) for k, v in out.items()}


def class_argument_help(cls: type) -> dict[str, str]:
    r""":func:`argument_help` of the docstring of ``cls`` and, for the
    arguments it leaves out, of its bases' (in method resolution order): a
    subclass documents its own arguments, its base the ones they share."""
    out: dict[str, str] = {}
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__")
        if isinstance(doc, str):
            for key, text in argument_help(inspect.cleandoc(doc)).items():
                out.setdefault(key, text)
    return out


def cast_value(what: str, value: Any, default: Any) -> Any:
    r"""``value`` as the type of ``default``: a ``bool``, ``int``, ``float``
    or ``str`` default gives its type (an integral float is accepted for an
    ``int``, as TOML and JSON may write ``20.0``); any other default
    (``None``, a sequence) leaves ``value`` to the constructor's own checks.
    A :class:`ValueError` starts with ``what``."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{what} must be true or false (got {value!r})")
        return value
    if isinstance(default, int | float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{what} must be a number (got {value!r})")
        if not math.isfinite(value):
            raise ValueError(f"{what} must be a finite number (got {value!r})")
        if isinstance(default, int) and float(value) != int(value):
            raise ValueError(f"{what} must be an integer (got {value!r})")
        return type(default)(value)
    if isinstance(default, str) and not isinstance(value, str):
        raise ValueError(f"{what} must be a string (got {value!r})")
    return value


def discover(kind: Kind, base: type) -> list[type]:
    r"""The classes of ``kind``: the concrete subclasses of ``base`` that
    the public modules of ``kind.source`` (sorted by name) list in their
    ``__all__``, each where it is defined, in ``__all__`` order."""
    root = importlib.import_module(kind.source)
    modules = [root]
    if hasattr(root, "__path__"):  # a package: each public module
        found = sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name)
        modules = [
            importlib.import_module(f"{kind.source}.{m.name}")
            for m in found
            if not m.name.startswith("_")
        ]
    out: list[type] = []
    for module in modules:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if (
                isinstance(obj, type)
                and issubclass(obj, base)
                and obj.__module__ == module.__name__
                and not inspect.isabstract(obj)
            ):
                out.append(obj)
    return out


class Registry(Sequence):  # type: ignore[type-arg]
    r"""The classes of one :class:`Kind`, found on first use
    (:func:`discover`): a sequence of classes that also resolves names
    (case, ``-``, ``_`` and the kind's suffix ignored; a class's ``name``
    and ``aliases`` attributes are names too) and checks keyword arguments.

    Args:
        kind (Kind or str): the kind, or its name in :data:`KINDS`.
        base (type): its base class.
    """

    def __init__(self, kind: Kind | str, base: type) -> None:
        self.kind = KINDS[kind] if isinstance(kind, str) else kind
        self.base = base
        self._found: list[type] | None = None

    def _classes(self) -> list[type]:
        if self._found is None:
            self._found = discover(self.kind, self.base)
        return self._found

    @overload
    def __getitem__(self, index: int) -> type: ...

    @overload
    def __getitem__(self, index: slice) -> list[type]: ...

    def __getitem__(self, index: int | slice) -> type | list[type]:
        return self._classes()[index]

    def __len__(self) -> int:
        return len(self._classes())

    def __iter__(self) -> Iterator[type]:
        return iter(self._classes())

    def __repr__(self) -> str:
        return f"Registry({self.kind.name!r}, {names(self._classes())})"

    def name(self, cls: type) -> str:
        r"""The registry name of ``cls`` (:func:`component_name`)."""
        return component_name(cls, self.kind.suffix)

    def names(self) -> list[str]:
        r"""The registry names, in order (the command line's choices)."""
        return [self.name(c) for c in self]

    def aliases(self) -> dict[str, type]:
        r"""Every name or alias that is not a class name (normalised)."""
        out: dict[str, type] = {}
        for cls in self:
            for name in (self.name(cls), *cls.__dict__.get("aliases", ())):
                if normalize_name(name, self.kind.suffix) != normalize_name(
                    cls.__name__, self.kind.suffix
                ):
                    out[name] = cls
        return out

    def resolve_class(self, query: Any) -> Any:
        r"""The class named ``query`` (or ``query`` itself, a class or an
        instance of the registry); a :class:`ValueError` lists the names."""
        return resolve_class(
            query, self._classes(), suffix=self.kind.suffix, aliases=self.aliases()
        )

    def resolve(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        r"""An instance of the class named ``query`` built with ``args`` and
        ``kwargs`` (an instance is returned as is)."""
        cls = self.resolve_class(query)
        return cls(*args, **kwargs) if isinstance(cls, type) else cls

    def hyperparameters(self, query: Any) -> dict[str, Any]:
        r"""Argument → default of the constructor of ``query``'s class:
        every argument with a default, but the kind's ``fixed`` ones."""
        cls = self.resolve_class(query)
        cls = cls if isinstance(cls, type) else type(cls)
        return hyperparameters(cls, self.kind)

    def check_kwargs(
        self, query: Any, kwargs: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        r"""``kwargs`` (:obj:`None`: none) for ``query``'s class, each value
        cast to its default's type (:func:`cast_value`); a one-line
        :class:`ValueError` names a key the class does not take, or one the
        run sets itself. Ranges are the constructor's to check."""
        kwargs = kwargs or {}
        known = self.hyperparameters(query)
        fixed = dict(self.kind.fixed)
        what = self.kind.kwargs_name
        out: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in fixed:
                raise ValueError(f"{what} key {key!r} is set by {fixed[key]}")
            if key not in known:
                cls = self.resolve_class(query)
                owner = cls.__name__ if isinstance(cls, type) else type(cls).__name__
                raise ValueError(
                    f"{what} key {key!r} is not an argument of {owner} (its "
                    f"arguments: {', '.join(known) or 'none'})"
                )
            out[key] = cast_value(f"{what} key {key!r}", value, known[key])
        return out

    def describe(self) -> list[dict[str, Any]]:
        r"""One ``{"name", "aliases", "class", "module", "kwargs", "help"}``
        per class (``kwargs``: :meth:`hyperparameters`; ``help``: their
        docstring text); :func:`fedgraph.declared.declared_components` gives
        the same from source."""
        out = []
        for cls in self:
            doc = class_argument_help(cls)
            kwargs = hyperparameters(cls, self.kind)
            out.append({
                "name": self.name(cls),
                "aliases": tuple(cls.__dict__.get("aliases", ())),
                "class": cls.__name__,
                "module": cls.__module__,
                "kwargs": kwargs,
                "help": {k: doc.get(k, "") for k in kwargs},
            })  # fmt: skip
        return out


def constructor_parameters(cls: type) -> list[inspect.Parameter]:
    r"""The parameters of the constructor of ``cls`` (``self`` left out):
    those of the first ``__init__`` of its method resolution order and,
    where one takes ``**kwargs``, those of the next ``__init__`` up the
    order that it forwards them to (a subclass that sets only its own
    arguments and passes the rest to its base)."""
    out: list[inspect.Parameter] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]
        out += params
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return out


def kind_registry(kind: Kind | str) -> Registry:
    r"""The :class:`Registry` of ``kind`` (or its name in :data:`KINDS`):
    the one its source package holds (``fedgraph.models.kge.models``,
    ``fedgraph.training.regimes.regimes``…), so that what lists every kind
    (the documentation's tables, the tests) needs no list of its own."""
    kind = KINDS[kind] if isinstance(kind, str) else kind
    module = importlib.import_module(kind.source)
    for value in vars(module).values():
        if isinstance(value, Registry) and value.kind.name == kind.name:
            return value
    raise ValueError(f"{kind.source} holds no registry of kind {kind.name!r}")


def hyperparameters(cls: type, kind: Kind) -> dict[str, Any]:
    r"""Argument → default of the constructor of ``cls``
    (:func:`constructor_parameters`): every argument with a default but
    ``kind.fixed``; a subclass's default wins over its base's."""
    fixed = dict(kind.fixed)
    out: dict[str, Any] = {}
    for p in constructor_parameters(cls):
        if (
            p.default is not p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name not in fixed
        ):
            out.setdefault(p.name, p.default)
    return out


__all__ = [
    "normalize_name",
    "resolve",
    "resolve_class",
    "names",
    "resolve_device",
    "Kind",
    "KINDS",
    "Registry",
    "kind_registry",
    "component_name",
    "argument_help",
    "class_argument_help",
    "cast_value",
    "discover",
    "constructor_parameters",
    "hyperparameters",
]
