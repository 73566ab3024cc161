r"""Federated unlearning of `FedLU <https://arxiv.org/abs/2302.02069>`_ (§4.2):
retroactive interference then passive decay on each requesting client, for
its local and global tables; the server then aggregates the global tables as
in learning, which propagates the forgetting.

Evaluation follows FedLU §5.3: Hits@1 and MRR on the forgetting set and on
the test set, for the local and the global model. Forgetting-set queries are
filtered by the client's known triples *minus* the forgetting set (as FedLU's
code does), test queries by all of them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.ranking import TripleFilter
from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.kge.fedlu import FedLU, FedLUClient
from fedgraph.federated.payload import Payload
from fedgraph.federated.unlearning.forget import check_forget_triples, retained_triples
from fedgraph.models.samplers import UniformNegativeSampler, subsampling_weights
from fedgraph.training.mutual import interference_epochs, mutual_epochs

METRICS = ("hits@1", "mrr")


def _forget_filter(client: FedLUClient, forget: Tensor) -> TripleFilter:
    g = client.shard.graph
    known = g.all_triples([s for s in ("train", "valid", "test") if s in g.split_names])
    keep = retained_triples(known, forget, g.num_entities, g.num_relations)
    return TripleFilter(keep, g.num_entities, g.num_relations)


def evaluate_forgetting(
    clients: Mapping[int, FedLUClient], requests: Mapping[int, Tensor]
) -> dict[str, dict[str, dict[str, float]]]:
    r"""``{"local" | "global": {"forget" | "test": {"hits@1", "mrr", "n_queries"}}}``,
    merged over clients (forget: the requesting clients; test: all)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for which in ("local", "global"):
        use_global = which == "global"
        forget = [
            clients[c].rank(
                f, use_global=use_global, filter=_forget_filter(clients[c], f)
            )
            for c, f in sorted(requests.items())
        ]
        test = [
            cl.rank(cl.shard.graph.triples("test"), use_global=use_global)
            for _, cl in sorted(clients.items())
        ]
        out[which] = {}
        for name, states in (("forget", forget), ("test", test)):
            m = LinkPredState.merged(states).compute()
            out[which][name] = {k: m[k] for k in (*METRICS, "n_queries")}
    return out


def unlearn_client(
    client: FedLUClient,
    forget: Tensor,
    *,
    epochs: int = 10,
    decay_epochs: int = 10,
    mu_soft: float = 0.1,
    mu_distill: float = 2.0,
    hard: bool = True,
    num_negatives: int | None = None,
) -> dict[str, Any]:
    r"""Makes ``client`` forget ``forget`` (``[n, 3]`` local training triples).

    1. Retroactive interference (Eq. 14) for ``epochs`` epochs over the
       forgetting set, with negatives drawn per triple and redrawn when they
       are known training triples (:math:`N \cap G^k = \emptyset`).
    2. Passive decay: mutual distillation (Eq. 11) on the retaining set
       :math:`G^k_c`, one epoch at a time, for at most ``decay_epochs`` epochs
       and while the local validation MRR improves (FedLU's code).

    Relation embeddings are frozen; only the two entity tables move (FedLU's
    code). Afterwards the client trains on :math:`G^k_c` only.

    Returns:
        dict: losses, epochs run and wall seconds.
    """
    forget = check_forget_triples(
        forget, client.shard, source=f"client {client.client_id}"
    )
    g = client.shard.graph
    t0 = time.perf_counter()
    client.model.relation_embedding.weight.requires_grad_(False)
    try:
        opt_l = torch.optim.Adam(
            client.model.entity_embedding.parameters(), lr=client.lr
        )
        opt_g = torch.optim.Adam(
            client.global_model.entity_embedding.parameters(), lr=client.lr
        )
        loss_l, loss_g = _interfere(
            client,
            forget,
            (opt_l, opt_g),
            epochs,
            num_negatives,
            mu_soft,
            mu_distill,
            hard,
        )
        t1 = time.perf_counter()
        retained = retained_triples(
            client.train_triples, forget, g.num_entities, g.num_relations
        )
        weights = subsampling_weights(retained) if client.weights is not None else None
        decay_run = _passive_decay(
            client, forget, retained, weights, (opt_l, opt_g), decay_epochs, mu_distill
        )
    finally:
        client.model.relation_embedding.weight.requires_grad_(True)
    client.train_triples, client.weights = retained, weights
    return {
        "n_forget": int(forget.size(0)),
        "interference_loss_local": loss_l,
        "interference_loss_global": loss_g,
        "interference_seconds": t1 - t0,
        "decay_epochs": decay_run,
        "decay_seconds": time.perf_counter() - t1,
    }


def _interfere(
    client: FedLUClient,
    forget: Tensor,
    optimizers: tuple[torch.optim.Optimizer, torch.optim.Optimizer],
    epochs: int,
    num_negatives: int | None,
    mu_soft: float,
    mu_distill: float,
    hard: bool,
) -> tuple[float, float]:
    r"""FedLU's retroactive interference (Eq. 14) on ``forget``, negatives
    drawn per triple and redrawn when they are known training triples.
    Returns the last epoch's local and global losses."""
    g = client.shard.graph
    sampler = UniformNegativeSampler(
        g.num_entities,
        num_negatives or client.sampler.num_negatives,
        filtered=True,
        filter_triples=g.triples("train"),
        num_relations=g.num_relations,
    )
    return interference_epochs(
        client.model,
        client.global_model,
        forget,
        epochs=epochs,
        batch_size=client.batch_size,
        local_optimizer=optimizers[0],
        global_optimizer=optimizers[1],
        sampler=sampler,
        generator=client.generator,
        mu_soft=mu_soft,
        mu_distill=mu_distill,
        hard=hard,
        modes=client.modes,
    )


def _passive_decay(
    client: FedLUClient,
    forget: Tensor,
    retained: Tensor,
    weights: Tensor | None,
    optimizers: tuple[torch.optim.Optimizer, torch.optim.Optimizer],
    decay_epochs: int,
    mu_distill: float,
) -> int:
    r"""FedLU's passive decay: mutual distillation on ``retained``, one epoch
    at a time, for at most ``decay_epochs`` epochs and while the local
    validation MRR (``forget`` filtered out) improves. Returns the epochs run."""
    g = client.shard.graph
    valid_filter = _forget_filter(client, forget)
    best, decay_run = -1.0, 0
    for _ in range(int(decay_epochs)):
        mutual_epochs(
            client.model,
            client.global_model,
            retained,
            epochs=1,
            batch_size=client.batch_size,
            loss=client.loss,
            local_optimizer=optimizers[0],
            global_optimizer=optimizers[1],
            sampler=client.sampler,
            generator=client.generator,
            mu_distill=mu_distill,
            weights=weights,
            modes=client.modes,
        )
        decay_run += 1
        mrr = client.rank(g.triples("valid"), filter=valid_filter).compute()["mrr"]
        if mrr <= best:
            break
        best = mrr
    return decay_run


def propagate(
    strategy: FedLU, clients: Mapping[int, FedLUClient], rounds: int = 1
) -> None:
    r"""Propagates the forgetting to the server as in learning: ``rounds``
    FedLU rounds (Alg. 1) on the retained data. Each client uploads its global
    rows, the server averages them (line 9), and each client receives its rows
    and runs its local mutual-distillation epochs (lines 5–7), so the global
    model evaluated afterwards is, as in learning, the client's global copy
    after its round. With ``rounds=0`` the clients only take the averaged rows
    (no training)."""
    replies = {
        c: Payload(
            arrays={ENTITY: cl.global_table.detach().clone()},
            row_ids={ENTITY: cl.shard.entity_ids.clone()},
        )
        for c, cl in clients.items()
    }
    strategy.aggregate_train(0, replies)
    if rounds <= 0:
        for cl in clients.values():
            with torch.no_grad():
                cl.global_table.copy_(strategy.table[cl.shard.entity_ids])
        return
    ids = sorted(clients)
    for r in range(1, int(rounds) + 1):
        payloads = strategy.configure_train(r, ids)
        replies = {c: clients[c].fit(payloads[c].detach()).detach() for c in ids}
        if r < rounds:
            strategy.aggregate_train(r, replies)


def unlearn_federation(
    strategy: FedLU,
    clients: Mapping[int, FedLUClient],
    requests: Mapping[int, Tensor],
    *,
    aggregate: bool = True,
    rounds: int = 1,
    **kwargs: Any,
) -> dict[str, Any]:
    r"""Runs :func:`unlearn_client` on every requesting client, then (with
    ``aggregate``) :func:`propagate` with ``rounds`` learning rounds. Returns
    per-client logs and seconds."""
    t0 = time.perf_counter()
    logs = {
        int(c): unlearn_client(clients[c], f, **kwargs)
        for c, f in sorted(requests.items())
    }
    t1 = time.perf_counter()
    if aggregate:
        propagate(strategy, clients, rounds)
    return {
        "clients": logs,
        "seconds": time.perf_counter() - t0,
        "propagate_seconds": time.perf_counter() - t1,
    }


__all__ = ["evaluate_forgetting", "unlearn_client", "propagate", "unlearn_federation"]
