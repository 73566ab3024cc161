r"""The R-GCN family's client loss terms (FedAlign's Eq. 12, term by term),
registered with the client-side hook (:mod:`fedgraph.federated.loss_terms`):
FedProx's proximal term on the bases, FedAlign's optimal-transport basis
alignment and the "-L" gradient penalty. A strategy switches each on with its
config key; :class:`~fedgraph.federated.rgcn.client.RGCNClient` adds the
active ones to its task loss and reports each term's unweighted value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import Tensor

from fedgraph.federated.fedprox import PROXIMAL_MU
from fedgraph.federated.loss_terms import LossTerm, register_loss_term
from fedgraph.federated.rgcn.lipschitz import gradient_penalty
from fedgraph.federated.rgcn.ot import alignment_term

#: Config keys a strategy may set (Flower-style kebab case).
ALIGN_MU = "fedalign-mu"
LIPSCHITZ_LAMBDA = "lipschitz-lambda"
LIPSCHITZ_ONE_SIDED = "lipschitz-one-sided"
LIPSCHITZ_CLIP = "lipschitz-clip"
#: Prefix of the peers' bases in FedAlign's payloads (``"peer{j}/{name}"``).
PEER_PREFIX = "peer"


def split_peers(
    arrays: Mapping[str, Tensor],
) -> tuple[dict[str, Tensor], list[dict[str, Tensor]]]:
    r"""Separates ``arrays`` into the global bases and the peers' bases
    (keys ``"peer{j}/{name}"``, one dict per peer in ``j`` order)."""
    own: dict[str, Tensor] = {}
    peers: dict[int, dict[str, Tensor]] = {}
    for key, v in arrays.items():
        if key.startswith(PEER_PREFIX) and "/" in key:
            head, name = key.split("/", 1)
            peers.setdefault(int(head[len(PEER_PREFIX) :]), {})[name] = v
        else:
            own[key] = v
    return own, [peers[j] for j in sorted(peers)]


@register_loss_term
class BasesProximalTerm(LossTerm):
    r"""FedProx on the R-GCN bases: :math:`\frac{\mu}{2} \sum_l \lVert
    \mathbf{V}^{(l)}_k - \mathbf{V}^{(l)}_t \rVert^2` against the received
    global bases, when the config sets ``"proximal-mu"`` above zero and
    bases were received."""

    family = "rgcn"
    name = "prox"

    def __init__(self, anchor: Mapping[str, Tensor], mu: float) -> None:
        self.anchor, self.weight = anchor, mu / 2

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], received: Any, previous: Any = None
    ) -> BasesProximalTerm | None:
        mu = float(config.get(PROXIMAL_MU, 0.0))
        anchor, _ = split_peers(received)
        return cls(anchor, mu) if mu > 0 and anchor else None

    def __call__(self, model: Any, **forward: Any) -> Tensor:
        return sum(
            ((v - self.anchor[k]) ** 2).sum()
            for k, v in model.bases().items()
            if k in self.anchor
        )


@register_loss_term
class AlignmentTerm(LossTerm):
    r"""FedAlign's basis alignment (Eq. 10): the mean Sinkhorn OT distance
    between the client's bases and its peers'
    (:func:`~fedgraph.federated.rgcn.ot.alignment_term`), weighted by
    ``"fedalign-mu"``, when the config sets it above zero and the payload
    carries peers' bases."""

    family = "rgcn"
    name = "ot"

    def __init__(self, peers: list[dict[str, Tensor]], mu: float) -> None:
        self.peers, self.weight = peers, mu

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], received: Any, previous: Any = None
    ) -> AlignmentTerm | None:
        mu = float(config.get(ALIGN_MU, 0.0))
        _, peers = split_peers(received)
        return cls(peers, mu) if mu > 0 and peers else None

    def __call__(self, model: Any, **forward: Any) -> Tensor:
        return alignment_term(model.bases(), self.peers)


@register_loss_term
class LipschitzTerm(LossTerm):
    r"""The "-L" gradient penalty (Eq. 11,
    :func:`~fedgraph.federated.rgcn.lipschitz.gradient_penalty` of the task
    loss with respect to the input node features), weighted by
    ``"lipschitz-lambda"`` when the config sets it above zero;
    ``"lipschitz-one-sided"`` selects the one-sided penalty and
    ``"lipschitz-clip"`` caps the 2-norm of the penalty's own gradient, which
    is otherwise unbounded (its second-order terms reach norms of 25-160 on
    the first MUTAG step at :math:`\lambda = 10`, and SGD lr 0.1 diverges to
    NaN within three steps, docs/papers/fedalign.md)."""

    family = "rgcn"
    name = "gp"
    own_gradient = True

    def __init__(self, lam: float, one_sided: bool, clip: float | None) -> None:
        self.weight, self.one_sided, self.clip = lam, one_sided, clip

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], received: Any, previous: Any = None
    ) -> LipschitzTerm | None:
        lam = float(config.get(LIPSCHITZ_LAMBDA, 0.0))
        if lam <= 0:
            return None
        clip = config.get(LIPSCHITZ_CLIP)
        one_sided = bool(config.get(LIPSCHITZ_ONE_SIDED, False))
        return cls(lam, one_sided, None if clip is None else float(clip))

    def __call__(self, model: Any, **forward: Any) -> Tensor:
        return gradient_penalty(
            forward["task"], forward["inputs"], one_sided=self.one_sided
        )


__all__ = [
    "BasesProximalTerm",
    "AlignmentTerm",
    "LipschitzTerm",
    "split_peers",
    "ALIGN_MU",
    "LIPSCHITZ_LAMBDA",
    "LIPSCHITZ_ONE_SIDED",
    "LIPSCHITZ_CLIP",
    "PEER_PREFIX",
]
