r"""The federated FB15k-237 partitions published with FedLU (Zhu et al.,
WWW 2023): ``C3``/``C5``/``C10`` cluster relations by spectral clustering of
their co-occurrence, ``R3``/``R5``/``R10`` assign relations at random; each
client's triples are split 8:1:1 and ``unlearn.txt`` is its published
forgetting set (1% of its train)."""

from __future__ import annotations

from typing import Any, ClassVar

from fedgraph.data.checksums import SHA256
from fedgraph.data.dataset import RemoteFile
from fedgraph.data.federated import (
    federated_from_dict,
    federated_stats,
    federated_to_dict,
    load_federated_folder,
)
from fedgraph.data.shard import FederatedKG
from fedgraph.data.triple_dataset import LabelledTripleDataset

_URL = "https://raw.githubusercontent.com/nju-websoft/FedLU/main/Data/FB15k-237"
_SPLITS = ("train", "valid", "test", "unlearn")


def _remote(partition: str, num_clients: int) -> tuple[RemoteFile, ...]:
    # FedLU's repository names client folders ``C3FL/0``; ours ``C3/client0``.
    return tuple(
        RemoteFile(
            f"{partition}/client{k}/{s}.txt",
            f"{_URL}/{partition}FL/{k}/{s}.txt",
            SHA256[f"fedlu-fb15k-237/{partition}/client{k}/{s}.txt"],
        )
        for k in range(num_clients)
        for s in _SPLITS
    )


class FedLUPartition(LabelledTripleDataset):
    r"""Base of the FedLU FB15k-237 partitions: a :class:`FederatedKG` read
    by :func:`~fedgraph.data.load_federated_folder` (global ids first-seen
    over clients; local ids sorted by global id).

    Args:
        root (str, optional): data root holding ``fedlu-fb15k-237/``.
        duplicates (str, optional): duplicate-triple policy. (default: ``"keep"``)
        force_reload (bool, optional): re-process the raw files.
        download (bool, optional): download missing raw files.
    """

    kind = "federated-kg"
    folder = "fedlu-fb15k-237"
    partition: ClassVar[str] = ""
    num_clients: ClassVar[int] = 0

    def process(self) -> FederatedKG:
        return load_federated_folder(
            self.raw_dir / self.partition, name=self.name, duplicates=self.duplicates
        )

    def serialize(self, obj: FederatedKG) -> dict[str, Any]:
        return federated_to_dict(obj)

    def deserialize(self, state: dict[str, Any]) -> FederatedKG:
        return federated_from_dict(state)

    def stats(self) -> dict[str, Any]:
        return federated_stats(self._data)


class FedLU_C3(FedLUPartition):  # noqa: N801
    r"""FedLU FB15k-237 ``C3``: 3 clients by relation clustering.

    **STATS:** train triples per client 44,245 / 12,007 / 191,840.
    """

    name = "fedlu-fb15k-237-c3"
    aliases = ("fb15k-237-c3",)
    partition, num_clients = "C3", 3
    remote_files = _remote("C3", 3)


class FedLU_C5(FedLUPartition):  # noqa: N801
    r"""FedLU FB15k-237 ``C5``: 5 clients by relation clustering."""

    name = "fedlu-fb15k-237-c5"
    aliases = ("fb15k-237-c5",)
    partition, num_clients = "C5", 5
    remote_files = _remote("C5", 5)


class FedLU_C10(FedLUPartition):  # noqa: N801
    r"""FedLU FB15k-237 ``C10``: 10 clients by relation clustering."""

    name = "fedlu-fb15k-237-c10"
    aliases = ("fb15k-237-c10",)
    partition, num_clients = "C10", 10
    remote_files = _remote("C10", 10)


class FedLU_R3(FedLUPartition):  # noqa: N801
    r"""FedLU FB15k-237 ``R3``: 3 clients by random relation assignment."""

    name = "fedlu-fb15k-237-r3"
    aliases = ("fb15k-237-r3",)
    partition, num_clients = "R3", 3
    remote_files = _remote("R3", 3)


class FedLU_R5(FedLUPartition):  # noqa: N801
    r"""FedLU FB15k-237 ``R5``: 5 clients by random relation assignment."""

    name = "fedlu-fb15k-237-r5"
    aliases = ("fb15k-237-r5",)
    partition, num_clients = "R5", 5
    remote_files = _remote("R5", 5)


class FedLU_R10(FedLUPartition):  # noqa: N801
    r"""FedLU FB15k-237 ``R10``: 10 clients by random relation assignment."""

    name = "fedlu-fb15k-237-r10"
    aliases = ("fb15k-237-r10",)
    partition, num_clients = "R10", 10
    remote_files = _remote("R10", 10)


__all__ = [
    "FedLUPartition",
    "FedLU_C3",
    "FedLU_C5",
    "FedLU_C10",
    "FedLU_R3",
    "FedLU_R5",
    "FedLU_R10",
]
