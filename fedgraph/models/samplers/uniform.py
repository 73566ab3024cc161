r"""Uniform head/tail corruption, the default negative sampler."""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.samplers.base import NegativeSampler


class UniformNegativeSampler(NegativeSampler):
    r"""Uniform head/tail corruption (Bordes et al.; the RotatE/FedLU code):
    every positive is corrupted on each side of the training call's modes,
    one optimiser step per side, by entities drawn uniformly.

    The arguments are those of
    :class:`~fedgraph.models.samplers.base.NegativeSampler`.
    """

    name = "uniform"

    def sides(
        self, positive: Tensor, generator: torch.Generator | None = None
    ) -> Tensor | None:
        return None


__all__ = ["UniformNegativeSampler"]
