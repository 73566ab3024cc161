r"""Argument checks shared by the public constructors and functions.

Each check returns the value in its canonical form (a Python ``int`` or
``float``, a ``long`` tensor) or raises a one-line error that names the
argument in backticks and echoes the value, as PyG and torchmetrics do::

    `num_entities` must be a positive integer (got 10.7)

A value of the wrong kind (a float where an integer is expected, ``None``, a
tensor of floats where ids are expected) raises :class:`TypeError`; a value
of the right kind out of its range or of the wrong shape raises
:class:`ValueError`. This module imports only torch, so every layer may use it.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import torch
from torch import Tensor

_INTEGER_RANGES = {None: "an integer", 0: "an integer >= 0", 1: "a positive integer"}


def shown(value: Any, width: int = 60) -> str:
    r"""``value`` as an error message echoes it: on one line, at most
    ``width`` characters (a tensor or array of many values by its shape, a
    NumPy or 0-dim torch scalar as the Python number)."""
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value = value.item()
    elif isinstance(value, Tensor) or hasattr(value, "shape"):
        return f"{type(value).__name__} of shape {tuple(value.shape)}"
    text = " ".join(repr(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def check_integer(value: Any, name: str, *, low: int | None = 1) -> int:
    r"""``value`` as an ``int`` if it is an integer ``>= low`` (``low=None``:
    any integer). ``bool`` is refused; NumPy and 0-dim integer tensors are
    accepted.

    Raises:
        TypeError: ``value`` is not an integer (``10.7``, ``"10"``, ``None``).
        ValueError: ``value`` is below ``low``.
    """
    want = _INTEGER_RANGES.get(low, f"an integer >= {low}")
    try:
        if isinstance(value, bool):
            raise TypeError
        number = operator.index(value)
    except (TypeError, RuntimeError):
        raise TypeError(f"`{name}` must be {want} (got {shown(value)})") from None
    if low is not None and number < low:
        raise ValueError(f"`{name}` must be {want} (got {number})")
    return number


def check_number(
    value: Any, name: str, *, low: float | None = None, strict: bool = True
) -> float:
    r"""``value`` as a finite ``float``, ``> low`` (``>= low`` with
    ``strict=False``; ``low=None``: any finite number).

    Raises:
        TypeError: ``value`` is not a real number (``None``, ``"1"``, ``True``).
        ValueError: ``value`` is NaN, infinite or out of range.
    """
    sign = ">" if strict else ">="
    want = "a finite number" + ("" if low is None else f" {sign} {low:g}")
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value = value.item()  # a NumPy or 0-dim torch scalar
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be {want} (got {shown(value)})")
    number = float(value)
    if not math.isfinite(number) or (
        low is not None and (number < low or (strict and number == low))
    ):
        raise ValueError(f"`{name}` must be {want} (got {shown(value)})")
    return number


def as_id_tensor(value: Any, name: str) -> Tensor:
    r"""``value`` (a tensor, array or nested list of integer ids) as a
    ``long`` tensor. A float tensor is refused rather than truncated (an
    empty one, which holds no id, is accepted).

    Raises:
        TypeError: ``value`` is not tensor-like, or holds floats or booleans.
    """
    try:
        tensor = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"`{name}` must be a tensor of integer ids (got {type(value).__name__})"
        ) from None
    if tensor.numel() and (tensor.is_floating_point() or tensor.is_complex()):
        raise TypeError(
            f"`{name}` must hold integer ids, not {tensor.dtype} (truncating "
            f"e.g. {tensor.reshape(-1)[0].item()!r} would change the id)"
        )
    if tensor.numel() and tensor.dtype == torch.bool:
        raise TypeError(f"`{name}` must hold integer ids, not torch.bool")
    return tensor.long()


def check_ids(value: Any, name: str, *, high: int, what: str = "entity") -> Tensor:
    r"""``value`` as a ``[n]`` ``long`` tensor of ids in ``[0, high)``.

    Raises:
        TypeError: see :func:`as_id_tensor`.
        ValueError: ``value`` is not one-dimensional or holds an id out of
            range.
    """
    ids = as_id_tensor(value, name)
    if ids.dim() != 1:
        raise ValueError(
            f"`{name}` must be a [n] tensor of {what} ids (got shape "
            f"{tuple(ids.shape)})"
        )
    _check_range(ids, name, high, what)
    return ids


def check_triples(
    value: Any,
    name: str,
    *,
    num_entities: int | None = None,
    num_relations: int | None = None,
) -> Tensor:
    r"""``value`` as a ``[n, 3]`` ``long`` tensor of ``(head, relation,
    tail)`` ids, entities in ``[0, num_entities)`` and relations in
    ``[0, num_relations)`` (a bound left :obj:`None` is not checked).

    Raises:
        TypeError: see :func:`as_id_tensor`.
        ValueError: ``value`` is not ``[n, 3]`` or holds an id out of range.
    """
    triples = as_id_tensor(value, name)
    if triples.dim() != 2 or triples.size(1) != 3:
        raise ValueError(
            f"`{name}` must be an [n, 3] tensor of (head, relation, tail) ids "
            f"(got shape {tuple(triples.shape)})"
        )
    if num_entities is not None:
        _check_range(triples[:, [0, 2]], name, num_entities, "entity")
    if num_relations is not None:
        _check_range(triples[:, [1]], name, num_relations, "relation")
    return triples


def _check_range(ids: Tensor, name: str, high: int, what: str) -> None:
    r"""Raises a :class:`ValueError` naming the first id of ``ids`` (``[n]``
    or ``[n, k]``) outside ``[0, high)`` and where it is."""
    bad = ((ids < 0) | (ids >= high)).reshape(-1)
    if not bool(bad.any()):
        return
    first = int(bad.nonzero()[0])
    value = int(ids.reshape(-1)[first])
    where = f"row {first // ids.size(1)}" if ids.dim() > 1 else f"index {first}"
    article = "an" if what[0] in "aeiou" else "a"
    raise ValueError(
        f"`{name}` holds {article} {what} id outside [0, {high}) (got {value} "
        f"at {where})"
    )


def check_instance(value: Any, name: str, kind: type | tuple[type, ...]) -> None:
    r"""Raises a :class:`TypeError` naming ``name`` unless ``value`` is a
    ``kind``."""
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        want = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"`{name}` must be of type {want} (got {type(value).__name__})")


__all__ = [
    "shown",
    "check_integer",
    "check_number",
    "as_id_tensor",
    "check_ids",
    "check_triples",
    "check_instance",
]
