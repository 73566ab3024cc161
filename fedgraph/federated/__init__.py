r"""Federated learning core: payloads, pure aggregation, strategies, clients.

``strategies`` is the registry of server-side strategies (resolved by name
with :func:`fedgraph.registry.resolve`, e.g. ``"fede"``, ``"fed-prox"``).
"""

from fedgraph.federated.aggregate import (
    merge_metric_sums,
    scatter_mean_rows,
    weighted_mean,
)
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.comm import CommLedger
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.fede import FedE
from fedgraph.federated.fedec import FedEC
from fedgraph.federated.fedmkgc import FedMKGC
from fedgraph.federated.fedmkgc_client import FedMKGCClient
from fedgraph.federated.fedprox import FedEProx, FedProx
from fedgraph.federated.payload import Payload, PayloadError

strategies = [FedAvg, FedProx, FedE, FedEProx, FedEC, FedMKGC]

__all__ = [
    "Payload",
    "PayloadError",
    "Strategy",
    "Client",
    "CommLedger",
    "weighted_mean",
    "scatter_mean_rows",
    "merge_metric_sums",
    "FedAvg",
    "FedProx",
    "FedE",
    "FedEProx",
    "FedEC",
    "FedMKGC",
    "FedMKGCClient",
    "strategies",
]
