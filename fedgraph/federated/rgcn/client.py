r"""The Fed-RGCN client: full-graph R-GCN training on one RDF shard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.federated.base import Client
from fedgraph.federated.payload import Payload
from fedgraph.federated.rgcn.lipschitz import gradient_penalty
from fedgraph.federated.rgcn.ot import alignment_term
from fedgraph.models.gnn.rgcn import RGCN
from fedgraph.partition.rdf_shard import RDFShard
from fedgraph.progress import advance

#: Config keys a strategy may set (Flower-style kebab case).
PROXIMAL_MU = "proximal-mu"
ALIGN_MU = "fedalign-mu"
LIPSCHITZ_LAMBDA = "lipschitz-lambda"
LIPSCHITZ_ONE_SIDED = "lipschitz-one-sided"
LIPSCHITZ_CLIP = "lipschitz-clip"
LOCAL_EPOCHS = "local-epochs"
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


class RGCNClient(Client):
    r"""One Fed-RGCN party (FedAlign's Algorithm 1, client side).

    :meth:`fit` copies the received global bases into its :class:`RGCN`
    (relation coefficients, root weights, biases and node embeddings stay
    local), runs ``local-epochs`` full-graph SGD steps on

    .. math::
        \hat F_k(\mathbf{w}) = F_k(\mathbf{w})
        + \frac{\mu_{prox}}{2} \sum_l \lVert \mathbf{V}^{(l)}_k - \mathbf{V}^{(l)}_t \rVert^2
        + \frac{\mu}{|P|} \sum_{j \in P} \sum_l \mathrm{OT}(\mathbf{V}^{(l)}_k, \mathbf{V}^{(l)}_j)
        + \lambda \big(\lVert \nabla_{G_k} F_k(\mathbf{w}) \rVert_2 - 1\big)^2

    (each term only when the strategy sets ``proximal-mu``, ``fedalign-mu``
    with peers' bases, or ``lipschitz-lambda`` in the config; FedAlign
    Eq. 12; ``lipschitz-one-sided`` selects the one-sided penalty of
    :func:`~fedgraph.federated.rgcn.lipschitz.gradient_penalty`;
    ``lipschitz-clip`` caps the 2-norm of the penalty's own gradient, which
    is otherwise unbounded: its second-order terms reach norms of 25-160 on
    the first MUTAG step at :math:`\lambda = 10` and SGD lr 0.1 diverges to
    NaN within three steps, docs/papers/fedalign.md) and replies with its bases and ``num_examples`` = its number of
    nodes (FedAlign weights clients by node count). :meth:`evaluate` first
    loads any bases it receives (the global model synchronised before
    evaluation, as in FedAlign §5.4), then counts correct predictions on
    ``config["split"]`` (``"train"``, ``"valid"`` or ``"test"``).

    Args:
        shard (RDFShard): the client's data.
        num_relations (int): number of predicates of the *source* graph (edge
            types are ``2r``/``2r + 1`` of the global relation ids).
        num_classes (int): number of classes.
        hidden_channels (int, optional): hidden size. (default: :obj:`16`)
        num_bases (int, optional): number of bases :math:`|V|`.
            (default: :obj:`100`)
        lr (float, optional): SGD learning rate :math:`\alpha`. (default: :obj:`0.1`)
        local_epochs (int, optional): used when the config has no
            ``local-epochs``. (default: :obj:`5`)
        weight_decay (float, optional): SGD weight decay. (default: :obj:`0.0`)
        seed (int, optional): seeds the local model. (default: :obj:`0`)
        share_initial (bool, optional): send the freshly initialised bases
            when registering, to seed a strategy built without initial arrays
            (:class:`~fedgraph.federated.FedAvg`): one client of a federation
            does, so that the server never needs a client's data.
            (default: :obj:`False`)
    """

    def __init__(
        self,
        shard: RDFShard,
        *,
        num_relations: int,
        num_classes: int,
        hidden_channels: int = 16,
        num_bases: int = 100,
        lr: float = 0.1,
        local_epochs: int = 5,
        weight_decay: float = 0.0,
        seed: int = 0,
        share_initial: bool = False,
    ) -> None:
        self.share_initial = bool(share_initial)
        if lr <= 0:
            raise ValueError(f"`lr` must be positive (got {lr})")
        self.shard = shard
        self.lr = lr
        self.local_epochs = local_epochs
        self.weight_decay = weight_decay
        h = shard.graph.homogeneous()
        self.edge_index, self.edge_type, self.y = h.edge_index, h.edge_type, h.y
        self.masks = {"train": h.train_mask, "valid": h.valid_mask, "test": h.test_mask}
        gen_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        self.model = RGCN(
            shard.num_nodes,
            2 * num_relations,
            num_classes,
            hidden_channels=hidden_channels,
            num_bases=num_bases,
            input="embedding",
        )
        torch.random.set_rng_state(gen_state)

    # -------------------------------------------------------------- protocol
    def initial_arrays(self) -> dict[str, Tensor]:
        r"""This client's freshly initialised bases (to seed a strategy)."""
        return {k: v.detach().clone() for k, v in self.model.bases().items()}

    def register(self) -> Payload:
        r"""The bases (:meth:`initial_arrays`) with ``share_initial``, else
        nothing."""
        return Payload(arrays=self.initial_arrays() if self.share_initial else {})

    def local_loss(
        self,
        config: Mapping[str, Any],
        global_bases: Mapping[str, Tensor],
        peers: list[dict[str, Tensor]],
    ) -> tuple[Tensor, dict[str, float], Tensor | None]:
        r"""The local objective :math:`\hat F_k` without the -L term, its
        parts, and the -L term :math:`\lambda(\ldots)^2` (``None`` when
        ``lipschitz-lambda`` is unset)."""
        lam = float(config.get(LIPSCHITZ_LAMBDA, 0.0))
        x = self.model.features()
        out = self.model(self.edge_index, self.edge_type, x)
        mask = self.masks["train"]
        task = F.cross_entropy(out[mask], self.y[mask])
        loss, parts = task, {"task": float(task.detach())}
        mu = float(config.get(PROXIMAL_MU, 0.0))
        if mu > 0 and global_bases:
            prox = sum(
                ((v - global_bases[k]) ** 2).sum()
                for k, v in self.model.bases().items()
                if k in global_bases
            )
            loss = loss + mu / 2 * prox
            parts["prox"] = float(prox.detach())
        mu_align = float(config.get(ALIGN_MU, 0.0))
        if mu_align > 0 and peers:
            ot = alignment_term(self.model.bases(), peers)
            loss = loss + mu_align * ot
            parts["ot"] = float(ot.detach())
        penalty = None
        if lam > 0:
            one_sided = bool(config.get(LIPSCHITZ_ONE_SIDED, False))
            gp = gradient_penalty(task, x, one_sided=one_sided)
            penalty = lam * gp
            parts["gp"] = float(gp.detach())
        return loss, parts, penalty

    def _backward(
        self, loss: Tensor, penalty: Tensor | None, clip: float | None
    ) -> float:
        r"""Accumulates the gradient of ``loss + penalty`` into ``.grad``, the
        penalty's part rescaled to 2-norm at most ``clip`` (over all
        parameters) when ``clip`` is set. Returns the penalty gradient's
        norm before clipping (0 without a penalty)."""
        if penalty is None:
            loss.backward()
            return 0.0
        params = [p for p in self.model.parameters() if p.requires_grad]
        if clip is None:
            (loss + penalty).backward()
            return float("nan")
        grads = torch.autograd.grad(
            penalty, params, retain_graph=True, allow_unused=True
        )
        grads = [
            torch.zeros_like(p) if g is None else g
            for p, g in zip(params, grads, strict=True)
        ]
        norm = float(torch.sqrt(sum((g.detach() ** 2).sum() for g in grads)))
        scale = min(1.0, clip / (norm + 1e-12))
        loss.backward()
        for p, g in zip(params, grads, strict=True):
            p.grad.add_(g.detach(), alpha=scale)
        return norm

    def fit(self, payload: Payload) -> Payload:
        global_bases, peers = split_peers(payload.arrays)
        self.model.load_bases(global_bases)
        cfg = payload.config
        epochs = int(cfg.get(LOCAL_EPOCHS, self.local_epochs))
        opt = torch.optim.SGD(
            self.model.parameters(),
            lr=float(cfg.get("lr", self.lr)),
            weight_decay=self.weight_decay,
        )
        self.model.train()
        clip = cfg.get(LIPSCHITZ_CLIP)
        clip = None if clip is None else float(clip)
        sums: dict[str, float] = {}
        for _ in range(epochs):
            opt.zero_grad()
            loss, parts, penalty = self.local_loss(cfg, global_bases, peers)
            gp_norm = self._backward(loss, penalty, clip)
            if penalty is not None:
                parts["gp_grad_norm"] = gp_norm
            opt.step()
            for k, v in parts.items():
                sums[f"{k}_sum"] = sums.get(f"{k}_sum", 0.0) + v
            advance()  # the open progress bar, if any
        # Separated training (nothing received) shares nothing back.
        shared = self.model.bases() if payload.arrays else {}
        return Payload(
            arrays={k: v.detach().clone() for k, v in shared.items()},
            metrics={**sums, "count": epochs},
            num_examples=self.shard.num_nodes,
        )

    @torch.no_grad()
    def evaluate(self, payload: Payload) -> Payload:
        global_bases, _ = split_peers(payload.arrays)
        self.model.load_bases(global_bases)
        split = str(payload.config.get("split", "test"))
        if split not in self.masks:
            raise ValueError(
                f"`split` must be one of {sorted(self.masks)} (got '{split}')"
            )
        self.model.eval()
        mask = self.masks[split]
        pred = self.model(self.edge_index, self.edge_type).argmax(dim=-1)
        correct = int((pred[mask] == self.y[mask]).sum())
        return Payload(
            metrics={"accuracy_sum": float(correct), "count": int(mask.sum())},
            num_examples=int(mask.sum()),
        )

    def state_dict(self) -> dict[str, Any]:
        return {"model": {k: v.clone() for k, v in self.model.state_dict().items()}}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.model.load_state_dict(state["model"])


__all__ = [
    "RGCNClient",
    "split_peers",
    "PROXIMAL_MU",
    "ALIGN_MU",
    "LIPSCHITZ_LAMBDA",
    "LIPSCHITZ_ONE_SIDED",
    "LIPSCHITZ_CLIP",
]
