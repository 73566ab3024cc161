r"""The "re-trained from scratch" reference of FedLU §5.3: models trained
only on the retained data, to compare unlearning against.

* local: one model per client on its retaining set (the Independent setting);
* global: one model on the union of all clients' retaining sets (the
  Centralized setting), tested on each client's queries among that client's
  entities with that client's filter.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import atomic_write_json
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.federated.unlearning.forget import retained_triples
from fedgraph.models.kge import KGEModel, resolve_model
from fedgraph.training.kge_trainer import KGETrainer

SPLITS = ("train", "valid", "test")


def _to_global(shard: KGShard, t: Tensor) -> Tensor:
    return torch.stack(
        [
            shard.entity_ids[t[:, 0]],
            shard.relation_ids[t[:, 1]],
            shard.entity_ids[t[:, 2]],
        ],
        1,
    )


def _retained_graph(shard: KGShard, forget: Tensor | None) -> KnowledgeGraph:
    g = shard.graph
    train = g.triples("train")
    if forget is not None:
        train = retained_triples(train, forget, g.num_entities, g.num_relations)
    return KnowledgeGraph(
        {"train": train, "valid": g.triples("valid"), "test": g.triples("test")},
        g.num_entities,
        g.num_relations,
        name=f"{g.name}-retained",
    )


def _summary(states: list[LinkPredState]) -> dict[str, float]:
    m = LinkPredState.merged(states).compute()
    return {k: m[k] for k in ("hits@1", "mrr", "n_queries")}


def _claim_checkpoints(path: Path, settings: dict[str, Any], resume: bool) -> None:
    r"""Writes the settings the checkpoints beside ``path`` are trained with;
    resuming checkpoints of other settings (another forget set, model or
    trainer option) is an error, not a silently wrong reference."""
    settings = json.loads(json.dumps(settings, default=str))
    if resume and path.exists():
        old = json.loads(path.read_text())
        if old != settings:
            keys = sorted(
                k for k in settings.keys() | old.keys() if old.get(k) != settings.get(k)
            )
            raise ValueError(
                f"{path}: the re-training checkpoints there were made with other "
                f"settings ({', '.join(keys)} differ); start afresh (CLI: without "
                "`--resume`) or use another run folder"
            )
    atomic_write_json(path, settings)


def retrain(
    fed: FederatedKG,
    requests: Mapping[int, Tensor],
    *,
    model: str = "transe",
    dim: int = 256,
    gamma: float = 9.0,
    seed: int = 0,
    which: tuple[str, ...] = ("local", "global"),
    checkpoint_dir: str | os.PathLike[str] | None = None,
    resume: bool = True,
    **trainer_kwargs: Any,
) -> dict[str, Any]:
    r"""Trains the re-trained references and evaluates them like
    :func:`~fedgraph.federated.unlearning.unlearn.evaluate_forgetting`.

    Args:
        fed (FederatedKG): the federation.
        requests (Mapping[int, Tensor]): client → ``[n, 3]`` local triples
            to leave out.
        model, dim, gamma, seed: the KGE model.
        which (tuple[str, ...]): ``"local"`` and/or ``"global"``.
        checkpoint_dir (str or Path, optional): each model's trainer
            checkpoints there after every evaluation (``local{K}.pt``,
            ``global.pt``). (default: none)
        resume (bool, optional): continue from those checkpoints where they
            exist (they must have been made with the same model, trainer
            options but ``max_epochs``, and forget sets, recorded in
            ``settings.json``; else :class:`ValueError`); else start afresh.
            (default: :obj:`True`)
        **trainer_kwargs: :class:`~fedgraph.training.kge_trainer.KGETrainer`
            options (``lr``, ``batch_size``, ``max_epochs``, …).

    Returns:
        dict: ``{"local" | "global": {"forget" | "test": {...}}, "seconds": {...},
        "train_seconds": {...}, "epochs": {...}}``: ``seconds`` is this call's
        wall time, ``train_seconds`` the training time summed over resumed
        calls.
    """
    out: dict[str, Any] = {"seconds": {}, "train_seconds": {}, "epochs": {}}
    ckpt_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
    if ckpt_dir is not None:
        settings = _checkpoint_settings(
            requests, model, dim, gamma, seed, trainer_kwargs
        )
        _claim_checkpoints(ckpt_dir / "settings.json", settings, resume)

    def trainer(m: KGEModel, graph: KnowledgeGraph, name: str) -> KGETrainer:
        ckpt = None if ckpt_dir is None else ckpt_dir / f"{name}.pt"
        return KGETrainer(m, graph, seed=seed, checkpoint=ckpt, **trainer_kwargs)

    def build(num_entities: int, num_relations: int) -> KGEModel:
        return resolve_model(model, num_entities, num_relations, dim, gamma=gamma)

    graphs = {s.client_id: _retained_graph(s, requests.get(s.client_id)) for s in fed}
    if "local" in which:
        _retrain_local(fed, graphs, requests, build, trainer, seed, resume, out)
    if "global" in which:
        _retrain_global(fed, graphs, requests, build, trainer, seed, resume, out)
    return out


def _checkpoint_settings(
    requests: Mapping[int, Tensor],
    model: str,
    dim: int,
    gamma: float,
    seed: int,
    trainer_kwargs: Mapping[str, Any],
) -> dict[str, Any]:
    r"""What the re-training checkpoints are made with (model, trainer
    options but ``max_epochs``, and a hash of each client's forget set)."""
    return {
        "model": model,
        "dim": dim,
        "gamma": gamma,
        "seed": seed,
        # a resumed run may train on to a new epoch cap
        "trainer": {k: v for k, v in trainer_kwargs.items() if k != "max_epochs"},
        "forget": {
            str(c): hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest()
            for c, t in sorted(requests.items())
        },
    }


def _retrain_local(
    fed: FederatedKG,
    graphs: Mapping[int, KnowledgeGraph],
    requests: Mapping[int, Tensor],
    build: Callable[[int, int], KGEModel],
    trainer: Callable[[KGEModel, KnowledgeGraph, str], KGETrainer],
    seed: int,
    resume: bool,
    out: dict[str, Any],
) -> None:
    r"""The local reference: one model per client on its retained graph,
    tested with the client's filter, the forget set ranked with a filter of
    the retained graph. Writes ``out["local"]`` and its times and epochs."""
    t0 = time.perf_counter()
    forget_states, test_states, epochs = [], [], []
    out["train_seconds"]["local"] = 0.0
    for shard in fed:
        c = shard.client_id
        torch.manual_seed(seed * 1009 + c)
        m = build(shard.num_entities, shard.num_relations)
        tr = trainer(m, graphs[c], f"local{c}")
        epochs.append(tr.fit(resume=resume)["epochs"])
        out["train_seconds"]["local"] += tr.train_seconds
        tr.filter = TripleFilter(
            shard.graph.all_triples(SPLITS), m.num_entities, m.num_relations
        )
        test_states.append(tr.evaluate("test"))
        if c in requests:
            g = graphs[c]
            flt = TripleFilter(g.all_triples(SPLITS), g.num_entities, g.num_relations)
            forget_states.append(rank_triples(m, requests[c], filter=flt))
    out["local"] = {"forget": _summary(forget_states), "test": _summary(test_states)}
    out["seconds"]["local"] = time.perf_counter() - t0
    out["epochs"]["local"] = epochs


def _union_graph(
    fed: FederatedKG, graphs: Mapping[int, KnowledgeGraph]
) -> KnowledgeGraph:
    r"""The union of the clients' retained graphs, in global ids."""
    trip = {
        s: torch.unique(
            torch.cat([_to_global(sh, graphs[sh.client_id].triples(s)) for sh in fed]),
            dim=0,
        )
        for s in SPLITS
    }
    return KnowledgeGraph(
        trip, fed.num_entities, fed.num_relations, name="retained-union"
    )


def _rank_global(
    m: KGEModel,
    shard: KGShard,
    triples: Tensor,
    graph: KnowledgeGraph,
    fed: FederatedKG,
) -> LinkPredState:
    r"""``triples`` (local ids of ``shard``) ranked by the global model ``m``
    among the client's entities, with the filter of ``graph``'s triples."""
    flt = TripleFilter(
        _to_global(shard, graph.all_triples(SPLITS)),
        fed.num_entities,
        fed.num_relations,
    )
    return rank_triples(
        m, _to_global(shard, triples), filter=flt, candidates=shard.entity_ids
    )


def _retrain_global(
    fed: FederatedKG,
    graphs: Mapping[int, KnowledgeGraph],
    requests: Mapping[int, Tensor],
    build: Callable[[int, int], KGEModel],
    trainer: Callable[[KGEModel, KnowledgeGraph, str], KGETrainer],
    seed: int,
    resume: bool,
    out: dict[str, Any],
) -> None:
    r"""The global reference: one model on the union of the retained graphs,
    tested on each client's queries among its entities with its filter.
    Writes ``out["global"]`` and its times and epochs."""
    t0 = time.perf_counter()
    union = _union_graph(fed, graphs)
    torch.manual_seed(seed * 1009 + 997)
    m = build(fed.num_entities, fed.num_relations)
    tr = trainer(m, union, "global")
    out["epochs"]["global"] = tr.fit(resume=resume)["epochs"]
    out["train_seconds"]["global"] = tr.train_seconds
    forget_states, test_states = [], []
    for shard in fed:
        g = shard.graph
        test_states.append(_rank_global(m, shard, g.triples("test"), g, fed))
        c = shard.client_id
        if c in requests:
            forget_states.append(_rank_global(m, shard, requests[c], graphs[c], fed))
    out["global"] = {"forget": _summary(forget_states), "test": _summary(test_states)}
    out["seconds"]["global"] = time.perf_counter() - t0


__all__ = ["retrain"]
