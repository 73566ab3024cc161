r"""Federated learning: the core and the algorithm families.

The core (this package's modules): payloads, pure aggregation, the
:class:`Strategy`/:class:`Client` contract, the communication ledger, the
client loss-term hook, FedAvg, FedProx, separated training, and the
algorithm registry (:mod:`fedgraph.federated.algorithms`). The families are
sub-packages that build on the core and never the other way round:
:mod:`~fedgraph.federated.kge` (entity tables: FedE, FedProx for KGE, FedEC,
FedLU, FedEP, FedS, FedAvgM, FedAdam, FedYogi), :mod:`~fedgraph.federated.rgcn`
(R-GCN bases: FedAlign), :mod:`~fedgraph.federated.text` (FedMKGC) and
:mod:`~fedgraph.federated.unlearning` (FedLU's unlearning).

``strategies`` lists the strategy classes exported here; the algorithms,
with their builders and settings, are in the registry
(:func:`fedgraph.federated.algorithms.algorithms`).
"""

from fedgraph.federated.aggregate import (
    merge_metric_sums,
    scatter_mean_rows,
    weighted_mean,
)
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.comm import CommLedger
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.fedprox import FedProx

# the families' public classes (after the core they build on)
from fedgraph.federated.kge.fede import FedE  # noqa: I001
from fedgraph.federated.kge.fedec import FedEC
from fedgraph.federated.kge.fedprox import FedEProx
from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.federated.text.client import FedMKGCClient
from fedgraph.federated.text.fedmkgc import FedMKGC

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
