r"""How much the per-client re-split explains of a gap to FedE's published
MRR: ranks a finished Single (``--algorithm independent``), Entire
(``centralized``) or federated run's test triples by their entities'
training degree and re-weights the per-degree MRR to the degree mix of
FedE's re-split.

fedgraph re-splits each client 8:1:1 after forcing every entity's and
relation's first occurrence into training, so a test triple's head or tail
may occur in a single training triple. FedE's ``split_dataset.ipynb`` draws
the evaluation triples in shuffled order and takes one only while its head,
its tail and its relation each still occur in more than two of the
client's remaining triples (until 20 % of them), so every head and tail of
a FedE test triple keeps at least two training triples, and low-degree
entities are drawn less often. This script

1. buckets the client's test triples by (head degree, tail degree) in the
   client's training triples (buckets ``1, 2, 3-5, 6-20, 21+``);
2. ranks each bucket with the run's model under the run's protocol (its
   candidates, directions and filter) and records MRR and the count;
3. applies FedE's rule (seeded shuffles) to all the client's triples and
   records the bucket mix of the evaluation triples it draws, with degrees
   counted in the training triples that rule leaves;
4. reports the client's MRR as measured and re-weighted to that mix
   (:math:`\sum_b p_\text{FedE}(b)\,\text{MRR}(b)`), per client and
   weighted by test triples.

The re-weighted figure is an estimate of what the same model would score
on test triples drawn like FedE's: it holds the model fixed (a model trained
on FedE's split sees other training triples) and assumes the reciprocal rank
depends on the split only through the degree bucket.

    python benchmarks/fede_split_difficulty.py runs/fede/fb15k237-fed3-rotate-single \
        --out docs/results/fede-split-difficulty-fb15k237-fed3-rotate.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

#: bucket edges of an entity's training degree: [1], [2], [3, 5], [6, 20], [21, inf)
EDGES = (1, 2, 3, 6, 21)
LABELS = ("1", "2", "3-5", "6-20", "21+")


def degrees(triples: Tensor, num_entities: int) -> Tensor:
    r"""``[E]`` number of ``triples`` each entity occurs in (as head or tail;
    a self-loop counts once)."""
    deg = torch.zeros(num_entities, dtype=torch.long)
    deg.index_add_(0, triples[:, 0], torch.ones(len(triples), dtype=torch.long))
    loops = triples[:, 0] == triples[:, 2]
    deg.index_add_(
        0, triples[~loops, 2], torch.ones(int((~loops).sum()), dtype=torch.long)
    )
    return deg


def bucket_of(deg: Tensor) -> Tensor:
    r"""Bucket index (0-4) of each degree (:data:`EDGES`); degree 0 (an
    entity outside the training triples) falls in bucket 0."""
    return (deg.unsqueeze(-1) >= torch.tensor(EDGES)).sum(-1).clamp(min=1) - 1


def cells(triples: Tensor, deg: Tensor) -> Tensor:
    r"""``[n]`` cell index ``5 * head bucket + tail bucket`` of each triple."""
    return bucket_of(deg[triples[:, 0]]) * len(EDGES) + bucket_of(deg[triples[:, 2]])


def fede_rule_split(
    triples: Tensor, num_entities: int, num_relations: int, seed: int, frac: float = 0.2
) -> tuple[Tensor, Tensor]:
    r"""``(train, evaluation)`` under FedE's notebook rule: in shuffled order
    (``seed``), a triple goes to evaluation while its head, tail and relation
    each occur in more than two of the triples still in training, until
    ``frac`` of the triples are drawn."""
    ent = degrees(triples, num_entities).tolist()
    rel = torch.bincount(triples[:, 1], minlength=num_relations).tolist()
    order = torch.randperm(len(triples), generator=torch.Generator().manual_seed(seed))
    want = int(frac * len(triples))
    take = torch.zeros(len(triples), dtype=torch.bool)
    drawn = 0
    rows = triples.tolist()
    for i in order.tolist():
        if drawn >= want:
            break
        h, r, t = rows[i]
        if ent[h] > 2 and ent[t] > 2 and rel[r] > 2:
            take[i] = True
            drawn += 1
            ent[h] -= 1
            if t != h:
                ent[t] -= 1
            rel[r] -= 1
    return triples[~take], triples[take]


def reciprocal_ranks(model: Any, graph: Any, protocol: Any) -> Tensor:
    r"""``[n]`` reciprocal rank of each test triple of ``graph`` under
    ``protocol`` (one ranked direction, as FedE's), in triple order."""
    from fedgraph.eval import LinkPredState, TripleFilter, rank_triples

    if len(protocol.directions) != 1:
        raise ValueError(
            f"protocol {protocol.name!r} ranks {list(protocol.directions)}; "
            "this script reads one direction per triple (FedE's protocol: tails)"
        )

    class Recorder(LinkPredState):
        def __init__(self) -> None:
            super().__init__()
            self.ranks: list[Tensor] = []

        def update(self, ranks: Tensor, direction: str) -> LinkPredState:
            self.ranks.append(ranks.detach().double().cpu())
            return super().update(ranks, direction)

    state = Recorder()
    rank_triples(
        model,
        graph.triples("test"),
        filter=TripleFilter(
            graph.all_triples(tuple(protocol.filter_splits)),
            graph.num_entities,
            graph.num_relations,
        ),
        directions=protocol.directions,
        exclude=protocol.excluded_ids(graph),
        state=state,
    )
    return 1.0 / torch.cat(state.ranks)


def client_report(
    model: Any, graph: Any, protocol: Any, seeds: int, relation_ids: Tensor
) -> dict[str, Any]:
    train, test = graph.triples("train"), graph.triples("test")
    rr = reciprocal_ranks(model, graph, protocol)
    ours = cells(test, degrees(train, graph.num_entities))
    n_cells = len(EDGES) ** 2
    count = torch.bincount(ours, minlength=n_cells)
    rr_sum = torch.zeros(n_cells, dtype=torch.float64).index_add_(0, ours, rr)
    mrr = [
        float(rr_sum[c] / count[c]) if count[c] else float("nan")
        for c in range(n_cells)
    ]
    rel = relation_ids[test[:, 1]]
    per_relation = {
        int(r): [int((rel == r).sum()), float(rr[rel == r].sum())]
        for r in rel.unique().tolist()
    }
    everything = graph.all_triples(("train", "valid", "test"))
    mix = torch.zeros(n_cells, dtype=torch.float64)
    for s in range(seeds):
        kept, drawn = fede_rule_split(
            everything, graph.num_entities, graph.num_relations, seed=s
        )
        mix += torch.bincount(
            cells(drawn, degrees(kept, graph.num_entities)), minlength=n_cells
        ).double()
    p_fede = mix / mix.sum()
    p_ours = count.double() / count.sum()
    missing = [c for c in range(n_cells) if p_fede[c] > 0 and not count[c]]
    reweighted = sum(
        float(p_fede[c]) * mrr[c] for c in range(n_cells) if count[c] and p_fede[c] > 0
    ) / float(sum(p_fede[c] for c in range(n_cells) if count[c]))
    low = [c for c in range(n_cells) if c // len(EDGES) == 0 or c % len(EDGES) == 0]
    return {
        "test_triples": int(len(test)),
        # global relation id -> [test triples, sum of reciprocal ranks]
        "relations": {str(r): v for r, v in sorted(per_relation.items())},
        "mrr": float(rr.mean()),
        "mrr_fede_mix": reweighted,
        "share_degree_1_ours": float(sum(p_ours[c] for c in low)),
        "share_degree_1_fede_rule": float(sum(p_fede[c] for c in low)),
        "cells_missing_in_ours": missing,
        "cells": [
            {
                "head": LABELS[c // len(EDGES)],
                "tail": LABELS[c % len(EDGES)],
                "n": int(count[c]),
                "mrr": mrr[c],
                "p_ours": float(p_ours[c]),
                "p_fede_rule": float(p_fede[c]),
            }
            for c in range(n_cells)
        ],
    }


def relation_draws(
    clients: list[dict[str, Any]], relations: list[Tensor], draws: int, seed: int = 0
) -> dict[str, Any] | None:
    r"""Client MRRs under other random relation splits: the clients'
    relations (``relations``: each client's global relation ids; each
    relation with its test triples and the reciprocal ranks its client's
    model gave them) are shuffled and dealt in the clients' sizes, as the
    relation partitioner deals them, ``draws`` times; a client's MRR is its
    relations' summed reciprocal ranks over their test triples. Returns the
    5/50/95th percentiles of the highest, middle and lowest client MRR and
    of the clients' unweighted mean, or :obj:`None` when clients share a
    relation (not a relation split)."""
    ids = torch.cat(relations)
    if ids.unique().numel() != ids.numel():
        return None
    sizes = [int(r.numel()) for r in relations]
    n = torch.zeros(ids.numel(), dtype=torch.float64)
    rr = torch.zeros(ids.numel(), dtype=torch.float64)
    where = {int(r): i for i, r in enumerate(ids.tolist())}
    for c in clients:
        for r, (k, v) in c["relations"].items():
            n[where[int(r)]], rr[where[int(r)]] = k, v
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for _ in range(draws):
        perm = torch.randperm(ids.numel(), generator=gen)
        mrrs = [float(rr[p].sum() / n[p].sum()) for p in perm.split(sizes)]
        rows.append(sorted(mrrs, reverse=True) + [sum(mrrs) / len(mrrs)])
    table = torch.tensor(rows, dtype=torch.float64)
    q = torch.tensor([0.05, 0.5, 0.95], dtype=torch.float64)
    names = [f"client rank {i + 1}" for i in range(len(sizes))]
    return {
        "draws": draws,
        "relations_per_client": sizes,
        "quantiles": [0.05, 0.5, 0.95],
        "sorted_clients": [
            torch.quantile(table[:, i], q).tolist() for i in range(len(sizes))
        ],
        "mean": torch.quantile(table[:, -1], q).tolist(),
        "labels": names,
    }


def _models(
    run: Path, settings: dict[str, Any], progress: dict[str, Any], data: str
) -> Any:
    r"""``(client id, model, shard)`` per client: a Single run's best model
    per client, the rows of an Entire run's pooled best model that the client
    holds, or the model a federated run tested (its best validation round;
    FedE's protocol: the server's aggregated rows)."""
    if settings.get("setting") == "centralized":
        yield from _entire_models(run, settings, data)
        return
    if settings.get("setting") == "independent":
        from fedgraph.runtime.trained import load_kge_federation
        from fedgraph.training.fusion_io import load_single_model, single_model_settings

        spec = single_model_settings(run, progress)
        for shard in load_kge_federation(data):
            yield shard.client_id, load_single_model(run, shard, spec), shard
        return
    from fedgraph.runtime.trained import load_trained_run

    tr = load_trained_run(run, "best", data=data)
    payloads = tr.strategy.configure_evaluate(0, list(tr.clients), "test")
    for c, client in tr.clients.items():
        yield c, client.evaluation_model(payloads[c]), client.shard


def _entire_models(run: Path, settings: dict[str, Any], data: str) -> Any:
    r"""An Entire run's best model (``trainer0.pt``, global ids) cut to each
    client: its entities' and relations' rows. Ranking a client's test
    triples with the cut model among the client's training entities is how
    the run tested it (candidates and filter are the client's)."""
    from fedgraph.models.kge import resolve_model
    from fedgraph.runtime.trained import load_kge_federation
    from fedgraph.training.fusion_io import best_weights

    weights = best_weights(run / "trainer0.pt")
    for shard in load_kge_federation(data):
        rows = {
            "entity_embedding.weight": shard.entity_ids.long(),
            "relation_embedding.weight": shard.relation_ids.long(),
        }
        model = resolve_model(
            settings["model"],
            shard.num_entities,
            shard.num_relations,
            int(settings["hidden_channels"]),
            gamma=float(settings["gamma"]),
        )
        model.load_state_dict(
            {k: v[rows[k]] if k in rows else v for k, v in weights.items()}
        )
        yield shard.client_id, model, shard


def run_settings(run: Path) -> tuple[dict[str, Any], str]:
    r"""A finished run's recorded settings and its kind (``independent``,
    ``centralized`` or the federated algorithm), or :class:`ValueError` with a
    one-line message naming ``run/results.json`` when it is missing."""
    path = run / "results.json"
    if not path.is_file():
        raise ValueError(f"{path} not found (a finished run's folder)")
    s = json.loads(path.read_text())["settings"]
    return s, s.get("setting") or s.get("algorithm")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "run", type=Path, help="a finished Single, Entire or federated run folder"
    )
    ap.add_argument("--data", default=None, help="the partition (default: the run's)")
    ap.add_argument("--seeds", type=int, default=3, help="shuffles of FedE's rule")
    ap.add_argument(
        "--draws", type=int, default=2000, help="random relation splits to simulate"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="JSON file to write")
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")
    if a.draws < 1:
        ap.error("--draws must be at least 1")
    try:
        s, _ = run_settings(a.run)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    from fedgraph.eval.protocol import resolve_protocol

    progress = json.loads((a.run / "progress.json").read_text())["settings"]
    data = a.data or progress["data"]
    protocol = resolve_protocol(s["protocol"]["name"])
    t0 = time.perf_counter()
    clients, relations = [], []
    for cid, model, shard in _models(a.run, s, progress, data):
        relations.append(shard.relation_ids.long())
        clients.append(
            client_report(model, shard.graph, protocol, a.seeds, shard.relation_ids)
        )
        c = clients[-1]
        print(
            f"client {cid}: MRR {100 * c['mrr']:.2f}, on FedE's degree mix "
            f"{100 * c['mrr_fede_mix']:.2f}; test triples with an entity of training "
            f"degree 1: ours {100 * c['share_degree_1_ours']:.1f} %, FedE's rule "
            f"{100 * c['share_degree_1_fede_rule']:.1f} %"
        )
    n = [c["test_triples"] for c in clients]
    w = lambda k: sum(c[k] * m for c, m in zip(clients, n, strict=True)) / sum(n)  # noqa: E731
    out = {
        "run": str(a.run),
        "data": str(data),
        "protocol": protocol.to_dict(),
        "seeds": a.seeds,
        "buckets": list(LABELS),
        "weighted": {"mrr": w("mrr"), "mrr_fede_mix": w("mrr_fede_mix")},
        "relation_draws": relation_draws(clients, relations, a.draws),
        "clients": clients,
        "seconds": time.perf_counter() - t0,
        "command": "python benchmarks/fede_split_difficulty.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    print(
        f"weighted: MRR {100 * out['weighted']['mrr']:.2f}, on FedE's degree mix "
        f"{100 * out['weighted']['mrr_fede_mix']:.2f}"
    )
    d = out["relation_draws"]
    if d is not None:
        span = lambda v: f"{100 * v[1]:.2f} [{100 * v[0]:.2f}, {100 * v[2]:.2f}]"  # noqa: E731
        print(
            f"{a.draws} random relation splits, client MRR highest to lowest, median "
            "[5th, 95th percentile]: "
            + "; ".join(span(v) for v in d["sorted_clients"])
            + f"; mean of clients {span(d['mean'])}"
        )
    if a.out is not None:
        from fedgraph.data.io import atomic_write_json

        atomic_write_json(a.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
