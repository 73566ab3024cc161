r"""One resolver for every registry (models, losses, partitioners, strategies…).

Modelled on PyG's ``torch_geometric/resolver.py``: a name is matched against
the class names of an explicit list, ignoring case, ``-`` and ``_``, and
optionally a common suffix (``"transe"`` finds ``TransE``, ``"fed-e"`` finds
``FedE``, ``"random"`` finds ``RandomRelationPartitioner`` when the suffix is
``"RelationPartitioner"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

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


__all__ = ["normalize_name", "resolve", "resolve_class", "names", "resolve_device"]
