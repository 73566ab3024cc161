r"""Argument types of the command line: a value out of range is refused by
the parser, with the option named (``argument --batch-size: must be a
positive integer (got 0)``), before anything is loaded or written."""

from __future__ import annotations

import argparse
import math
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


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text})")
    return value


def fraction(text: str) -> float:
    r"""A number in ``(0, 1]``."""
    value = _float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1] (got {value:g})")
    return value


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


__all__ = ["positive", "non_negative", "count", "fraction", "real"]
