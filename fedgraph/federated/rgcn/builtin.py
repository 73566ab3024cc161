r"""FedAlign's R-GCN methods (Table 4) in the algorithm registry: SP,
FedAvg, FedProx, FedAlign and their "-L" variants (``fedavg-l`` …)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from torch import Tensor

from fedgraph.federated.algorithms import Algorithm, NoSettings, setting
from fedgraph.federated.base import Strategy
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.fedprox import FedProx
from fedgraph.federated.rgcn.fedalign import FedAlign, SyncOnEvaluate
from fedgraph.federated.rgcn.setup import RGCNBuilder
from fedgraph.federated.separated import Separated

Arrays = Mapping[str, Tensor] | None


@dataclass(frozen=True)
class MuSettings:
    mu: float = setting(
        10.0, "weight μ of the proximal / basis-alignment term", low=0.0
    )


@dataclass(frozen=True)
class LipschitzSettings:
    lam: float = setting(10.0, "weight λ of the gradient penalty (Eq. 11)", low=0.0)
    one_sided: bool = setting(False, "penalise only gradient norms above 1")
    clip: float = setting(
        1.0, "2-norm clip of the penalty's own gradient (0: unclipped)", low=0.0
    )


@dataclass(frozen=True)
class MuLipschitzSettings(LipschitzSettings, MuSettings):
    pass


REFERENCE = (
    '"Improving Federated Relational Data Modeling via Basis Alignment and '
    'Weight Constraint" (Lin, Chen, Chen and Wang)'
)


def _separated(initial: Arrays, config: dict[str, Any], x: Any) -> Strategy:
    return Separated(config=config)


def _fedavg(initial: Arrays, config: dict[str, Any], x: Any) -> Strategy:
    return SyncOnEvaluate(FedAvg(initial, config=config))


def _fedprox(initial: Arrays, config: dict[str, Any], x: Any) -> Strategy:
    return SyncOnEvaluate(FedProx(initial, proximal_mu=x.mu, config=config))


def _fedalign(initial: Arrays, config: dict[str, Any], x: Any) -> Strategy:
    return SyncOnEvaluate(FedAlign(initial, mu=x.mu, config=config))


# the -L variants: the same strategies, whose LipschitzSettings switch the
# clients' gradient penalty on (fedgraph.federated.rgcn.setup.train_config)
ALGORITHMS = [
    Algorithm("sp", "rgcn", "separated training: every client alone (no sharing)",
              RGCNBuilder(_separated, shares_bases=False), NoSettings, reference=REFERENCE),
    Algorithm("fedavg", "rgcn", "FedAvg of the R-GCN bases (relation coefficients stay local)",
              RGCNBuilder(_fedavg), NoSettings, reference=REFERENCE),
    Algorithm("fedprox", "rgcn", "FedAvg of the bases plus a proximal term",
              RGCNBuilder(_fedprox), MuSettings, reference=REFERENCE),
    Algorithm("fedalign", "rgcn", "FedAvg of the bases plus the optimal-transport basis alignment",
              RGCNBuilder(_fedalign), MuSettings, reference=REFERENCE),
    Algorithm("fedavgl", "rgcn", "FedAvg of the R-GCN bases, with the -L gradient penalty",
              RGCNBuilder(_fedavg), LipschitzSettings, reference=REFERENCE),
    Algorithm("fedproxl", "rgcn", "FedAvg of the bases plus a proximal term, with the -L gradient penalty",
              RGCNBuilder(_fedprox), MuLipschitzSettings, reference=REFERENCE),
    Algorithm("fedalignl", "rgcn", "FedAlign with the -L gradient penalty",
              RGCNBuilder(_fedalign), MuLipschitzSettings, reference=REFERENCE),
]  # fmt: skip
