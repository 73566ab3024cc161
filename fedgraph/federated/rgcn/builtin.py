r"""FedAlign's R-GCN methods (Table 4) in the algorithm registry: SP,
FedAvg, FedProx, FedAlign and their "-L" variants (``fedavg-l`` …)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fedgraph.federated.algorithms import Algorithm, NoSettings, normalize, setting
from fedgraph.federated.rgcn.setup import METHODS, build_rgcn_federation


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

SUMMARY = {
    "sp": "separated training: every client alone (no sharing)",
    "fedavg": "FedAvg of the R-GCN bases (relation coefficients stay local)",
    "fedprox": "FedAvg of the bases plus a proximal term",
    "fedalign": "FedAvg of the bases plus the optimal-transport basis alignment",
}


def _entry(method: str) -> Algorithm:
    base, lipschitz = method.removesuffix("-l"), method.endswith("-l")
    own = MuSettings if base in ("fedprox", "fedalign") else NoSettings
    if lipschitz:
        own = MuLipschitzSettings if own is MuSettings else LipschitzSettings
    build: Callable[..., Any] = partial(build_rgcn_federation, method)
    summary = SUMMARY[base] + (", with the -L gradient penalty" if lipschitz else "")
    return Algorithm(
        normalize(method),
        "rgcn",
        summary,
        build,
        own,
        reference=REFERENCE,
    )


ALGORITHMS = [_entry(m) for m in METHODS]
