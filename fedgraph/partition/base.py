r"""The partitioner contract."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Partitioner(ABC):
    r"""Splits one graph into client shards.

    A partitioner is a seeded, deterministic object (scikit-learn style: its
    constructor arguments are stored unchanged under their own names and all
    randomness comes from ``seed``): calling it twice on the same input gives
    byte-identical output.

    Args:
        num_clients (int): number of client shards to produce.
        seed (int, optional): random seed. (default: :obj:`0`)
    """

    def __init__(self, num_clients: int, *, seed: int = 0) -> None:
        if not isinstance(num_clients, int) or num_clients < 1:
            raise ValueError(
                f"`num_clients` must be a positive integer (got {num_clients!r})"
            )
        self.num_clients = num_clients
        self.seed = seed

    @abstractmethod
    def __call__(self, graph: Any) -> Any:
        r"""Partitions ``graph`` and returns the federated dataset."""

    def get_params(self) -> dict[str, Any]:
        r"""The constructor arguments, for metadata and replay."""
        return {"num_clients": self.num_clients, "seed": self.seed}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{self.__class__.__name__}({args})"


__all__ = ["Partitioner"]
