r"""FedAlign's R-GCN methods (Table 4) in the algorithm registry: SP,
FedAvg, FedProx, FedAlign and their "-L" variants (``fedavg-l`` …)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fedgraph.federated.algorithms import Algorithm, NoSettings, setting
from fedgraph.federated.rgcn.setup import build_rgcn_federation


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


def _build(method: str) -> Callable[..., Any]:
    return partial(build_rgcn_federation, method)


ALGORITHMS = [
    Algorithm("sp", "rgcn", "separated training: every client alone (no sharing)",
              _build("sp"), NoSettings, reference=REFERENCE),
    Algorithm("fedavg", "rgcn", "FedAvg of the R-GCN bases (relation coefficients stay local)",
              _build("fedavg"), NoSettings, reference=REFERENCE),
    Algorithm("fedprox", "rgcn", "FedAvg of the bases plus a proximal term",
              _build("fedprox"), MuSettings, reference=REFERENCE),
    Algorithm("fedalign", "rgcn", "FedAvg of the bases plus the optimal-transport basis alignment",
              _build("fedalign"), MuSettings, reference=REFERENCE),
    Algorithm("fedavgl", "rgcn", "FedAvg of the R-GCN bases, with the -L gradient penalty",
              _build("fedavg-l"), LipschitzSettings, reference=REFERENCE),
    Algorithm("fedproxl", "rgcn", "FedAvg of the bases plus a proximal term, with the -L gradient penalty",
              _build("fedprox-l"), MuLipschitzSettings, reference=REFERENCE),
    Algorithm("fedalignl", "rgcn", "FedAlign with the -L gradient penalty",
              _build("fedalign-l"), MuLipschitzSettings, reference=REFERENCE),
]  # fmt: skip
