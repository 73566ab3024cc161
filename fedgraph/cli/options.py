r"""Argument types of the command line: a value out of range, NaN or
infinite is refused by the parser, with the option named (``argument
--batch-size: must be a positive integer (got 0)``), before anything is
loaded or written. Every numeric option of ``fedgraph`` takes one of these
types (``tests/guarantees/test_numbers.py`` holds it to that)."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None


def positive(text: str) -> int:
    r"""An integer ``>= 1``."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {value})")
    return value


def non_negative(text: str) -> int:
    r"""An integer ``>= 0``."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more (got {value})")
    return value


count = non_negative

#: the largest ``--seed`` (NumPy's and scikit-learn's bound on a seed)
MAX_SEED = 2**32 - 1


def seed(text: str) -> int:
    r"""An integer in ``[0, 2**32 - 1]``."""
    value = non_negative(text)
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"must be at most 2**32 - 1 = {MAX_SEED} (got {value})"
        )
    return value


def threads(text: str) -> int:
    r"""An integer in ``[0, os.cpu_count()]``: more threads than the
    machine has CPUs are refused (torch may crash creating thousands)."""
    value = non_negative(text)
    cpus = os.cpu_count()
    if cpus is not None and value > cpus:
        raise argparse.ArgumentTypeError(
            f"must be at most the number of CPUs of this machine, {cpus} (got {value})"
        )
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text})")
    return value


def number(text: str) -> float:
    r"""Any finite number (the library checks its range)."""
    return _float(text)


def fraction(text: str) -> float:
    r"""A number in ``(0, 1]``."""
    value = _float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1] (got {value:g})")
    return value


def unit(text: str) -> float:
    r"""A number in ``[0, 1)`` (a smoothing or dropout rate)."""
    value = _float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1) (got {value:g})")
    return value


def between(low: float, high: float) -> Callable[[str], float]:
    r"""A number in the open interval ``(low, high)``."""

    def parse(text: str) -> float:
        value = _float(text)
        if not low < value < high:
            raise argparse.ArgumentTypeError(
                f"must lie in ({low:g}, {high:g}) (got {value:g})"
            )
        return value

    parse.__name__ = "number"
    return parse


def real(low: float, *, strict: bool = True) -> Callable[[str], float]:
    r"""A finite number ``> low`` (``>= low`` with ``strict=False``)."""

    def parse(text: str) -> float:
        value = _float(text)
        if value < low or (strict and value == low):
            sign = ">" if strict else ">="
            raise argparse.ArgumentTypeError(f"must be {sign} {low:g} (got {value:g})")
        return value

    parse.__name__ = "number"
    return parse


__all__ = [
    "positive",
    "non_negative",
    "count",
    "seed",
    "threads",
    "MAX_SEED",
    "number",
    "fraction",
    "unit",
    "between",
    "real",
]
