r"""The Fed-RGCN client: full-graph R-GCN training on one RDF shard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.federated.base import Client
from fedgraph.federated.loss_terms import LossTerm, active_terms
from fedgraph.federated.payload import Payload
from fedgraph.models.gnn.rgcn import RGCN
from fedgraph.partition.rdf_shard import RDFShard
from fedgraph.progress import advance

#: Config key a strategy may set (Flower-style kebab case).
LOCAL_EPOCHS = "local-epochs"


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

    (FedAlign Eq. 12): the task loss plus the registered R-GCN loss terms
    (:mod:`fedgraph.federated.rgcn.terms`) that the strategy's config switches
    on, each reported unweighted as ``"{name}_sum"``. It replies with its
    bases and ``num_examples`` = its number of nodes (FedAlign weights
    clients by node count). :meth:`evaluate` first
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

    def loss_terms(
        self, config: Mapping[str, Any], received: Mapping[str, Tensor]
    ) -> list[LossTerm]:
        r"""The registered R-GCN loss terms (:mod:`~fedgraph.federated.loss_terms`)
        that ``config`` switches on, given the ``received`` arrays."""
        return active_terms(config, received, family="rgcn")

    def local_loss(
        self, terms: list[LossTerm]
    ) -> tuple[Tensor, dict[str, float], list[tuple[LossTerm, Tensor]]]:
        r"""The local objective: the task loss plus each term of ``terms``
        times its weight, except those back-propagated on their own
        (:attr:`~fedgraph.federated.loss_terms.LossTerm.own_gradient`),
        returned weighted beside it; and the unweighted parts."""
        x = self.model.features()
        out = self.model(self.edge_index, self.edge_type, x)
        mask = self.masks["train"]
        task = F.cross_entropy(out[mask], self.y[mask])
        loss, parts = task, {"task": float(task.detach())}
        apart: list[tuple[LossTerm, Tensor]] = []
        for term in terms:
            value = term(self.model, task=task, inputs=x)
            parts[term.name] = float(value.detach())
            if term.own_gradient:
                apart.append((term, term.weight * value))
            else:
                loss = loss + term.weight * value
        return loss, parts, apart

    def _backward(
        self, loss: Tensor, apart: list[tuple[LossTerm, Tensor]]
    ) -> dict[str, float]:
        r"""Accumulates the gradient of ``loss`` plus the ``apart`` terms into
        ``.grad``, each term's part rescaled to 2-norm at most its ``clip``
        (over all parameters) when set. Returns each term's gradient norm
        before clipping (NaN when unclipped), as ``"{name}_grad_norm"``."""
        norms = {f"{t.name}_grad_norm": float("nan") for t, _ in apart}
        clipped = [(t, v) for t, v in apart if t.clip is not None]
        for _, v in (tv for tv in apart if tv[0].clip is None):
            loss = loss + v
        if not clipped:
            loss.backward()
            return norms
        params = [p for p in self.model.parameters() if p.requires_grad]
        scaled = []
        for term, value in clipped:
            grads = torch.autograd.grad(
                value, params, retain_graph=True, allow_unused=True
            )
            grads = [
                torch.zeros_like(p) if g is None else g
                for p, g in zip(params, grads, strict=True)
            ]
            norm = float(torch.sqrt(sum((g.detach() ** 2).sum() for g in grads)))
            norms[f"{term.name}_grad_norm"] = norm
            scaled.append((grads, min(1.0, term.clip / (norm + 1e-12))))
        loss.backward()
        for grads, scale in scaled:
            for p, g in zip(params, grads, strict=True):
                p.grad.add_(g.detach(), alpha=scale)
        return norms

    def fit(self, payload: Payload) -> Payload:
        self.model.load_bases(payload.arrays)
        cfg = payload.config
        epochs = int(cfg.get(LOCAL_EPOCHS, self.local_epochs))
        opt = torch.optim.SGD(
            self.model.parameters(),
            lr=float(cfg.get("lr", self.lr)),
            weight_decay=self.weight_decay,
        )
        self.model.train()
        terms = self.loss_terms(cfg, payload.arrays)
        sums: dict[str, float] = {}
        for _ in range(epochs):
            opt.zero_grad()
            loss, parts, apart = self.local_loss(terms)
            parts.update(self._backward(loss, apart))
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
        self.model.load_bases(payload.arrays)  # the bases it holds, if any
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


__all__ = ["RGCNClient", "LOCAL_EPOCHS"]
