r"""Exceptions shared across fedgraph (importing no torch).

The command line maps them to exit codes: a :class:`ValueError` (bad input)
to 2, a :class:`RunFailed` (good input, but the run could not go on) to 1,
each as a one-line message.
"""

from __future__ import annotations


class RunFailed(RuntimeError):
    r"""A run that was given valid input cannot go on (e.g. it diverged)."""


class DivergedError(RunFailed):
    r"""A loss or score became NaN or infinite: the message names the round
    and the client."""


__all__ = ["RunFailed", "DivergedError"]
