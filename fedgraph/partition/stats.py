r"""Statistics of a partition, per client and overall (FedE Table 2, FedLU
Figure 3), as a dict (JSON) and as a text table.

Other shard kinds (e.g. RDF shards, FedAlign Table 3) plug in with
:func:`register_describer`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from fedgraph.data.shard import FederatedKG
from fedgraph.progress import advance


def clustering_coefficient(edge_index: torch.Tensor, num_nodes: int) -> float:
    r"""Average clustering coefficient of a directed graph, as FedLU's
    ``quantity_dataset.py`` measures it (``networkx.average_clustering`` of
    the ``DiGraph`` of ``(head, tail)`` edges: duplicates collapsed,
    self-loops ignored; Fagiolo's directed clustering):

    .. math::
        c_u = \frac{[(A + A^\top)^3]_{uu}}
        {2\,\big(d^{tot}_u (d^{tot}_u - 1) - 2\, d^{\leftrightarrow}_u\big)},
        \qquad \bar c = \frac{1}{|V|}\sum_u c_u,

    with :math:`A` the binary adjacency, :math:`d^{tot}_u` the in- plus
    out-degree and :math:`d^{\leftrightarrow}_u = (A^2)_{uu}` the number of
    reciprocated edges; :math:`c_u = 0` when :math:`u` is in no triangle.
    Computed with sparse products in row blocks.

    Args:
        edge_index (Tensor): ``[2, E]`` directed edges (head → tail).
        num_nodes (int): number of nodes :math:`|V|` (all are averaged over).
    """
    if num_nodes == 0:
        return 0.0
    src, dst = edge_index[0].numpy(), edge_index[1].numpy()
    keep = src != dst
    a = sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.int64), (src[keep], dst[keep])),
        shape=(num_nodes, num_nodes),
    )
    a.data[:] = 1
    s = (a + a.T).tocsr()
    d_tot = np.asarray(s.sum(axis=1)).ravel()
    d_bi = np.asarray(a.multiply(a.T).sum(axis=1)).ravel()
    tri = np.zeros(num_nodes, dtype=np.float64)
    block = 1024
    for start in range(0, num_nodes, block):  # row blocks bound the memory
        rows = s[start : start + block]
        tri[start : start + block] = np.asarray(
            (rows @ s).multiply(rows).sum(axis=1)
        ).ravel()
    denom = 2.0 * (d_tot * (d_tot - 1) - 2 * d_bi)
    c = np.divide(tri, denom, out=np.zeros_like(tri), where=tri > 0)
    return float(c.mean())


def _membership(fed: FederatedKG) -> sp.csr_matrix:
    r"""Binary ``[num_clients, num_entities]`` client–entity matrix."""
    rows = (
        np.concatenate(
            [np.full(s.entity_ids.numel(), i) for i, s in enumerate(fed.shards)]
        )
        if fed.num_clients
        else np.zeros(0, dtype=np.int64)
    )
    cols = (
        torch.cat([s.entity_ids for s in fed.shards]).numpy()
        if fed.num_clients
        else rows
    )
    return sp.csr_matrix(
        (np.ones(rows.size, dtype=np.int64), (rows, cols)),
        shape=(fed.num_clients, fed.num_entities),
    )


def describe_kg(fed: FederatedKG, *, clustering: bool = True) -> dict[str, Any]:
    r"""Per-client and overall statistics of a :class:`FederatedKG`.

    Per client: ``entities``, ``relations``, ``triples`` per split,
    ``shared_entities`` (held by at least one other client), ``mean_degree``
    (triples per entity over all splits, i.e. the mean in- = out-degree as
    in FedLU's Figure 3) and ``clustering`` (:func:`clustering_coefficient`
    over all splits). Overall: totals, ``entities`` (the union),
    ``shared_entities`` (held by two or more clients) and the
    ``overlap`` matrix (``overlap[i][j]`` = entities held by both i and j).
    """
    member = _membership(fed)
    overlap = (member @ member.T).toarray()
    holders = np.asarray(member.sum(axis=0)).ravel()
    shared_mask = holders >= 2
    clients = []
    for i, shard in enumerate(fed.shards):
        g = shard.graph
        n_tri = g.num_triples()
        entry: dict[str, Any] = {
            "client": i,
            "entities": shard.num_entities,
            "relations": shard.num_relations,
            "triples": {s: g.num_triples(s) for s in g.split_names},
            "shared_entities": int(shared_mask[shard.entity_ids.numpy()].sum()),
            "mean_degree": n_tri / shard.num_entities if shard.num_entities else 0.0,
        }
        if clustering:
            ei = g.all_triples()[:, [0, 2]].t()
            entry["clustering"] = clustering_coefficient(ei, shard.num_entities)
        clients.append(entry)
        advance()  # the open progress bar, if any
    splits: dict[str, int] = {}
    for c in clients:
        for s, n in c["triples"].items():
            splits[s] = splits.get(s, 0) + n
    rel_union = (
        torch.unique(torch.cat([s.relation_ids for s in fed.shards])).numel()
        if fed.num_clients
        else 0
    )
    return {
        "kind": "kg",
        "clients": clients,
        "overall": {
            "num_clients": fed.num_clients,
            "entities": int((holders > 0).sum()),
            "relations": rel_union,
            "triples": splits,
            "shared_entities": int(shared_mask.sum()),
            "mean_entities": float(np.mean([c["entities"] for c in clients]))
            if clients
            else 0.0,
            "overlap": overlap.tolist(),
        },
    }


DESCRIBERS: dict[type, Callable[..., dict[str, Any]]] = {FederatedKG: describe_kg}


def register_describer(cls: type, fn: Callable[..., dict[str, Any]]) -> None:
    r"""Registers ``fn(obj, **kwargs) -> dict`` as the statistics of ``cls``
    (its dict must hold ``"clients"``: a list of flat-or-nested dicts)."""
    DESCRIBERS[cls] = fn


def describe(fed: Any, **kwargs: Any) -> dict[str, Any]:
    r"""Statistics of any registered federated dataset (see :data:`DESCRIBERS`).

    Keyword options a kind's describer does not take are ignored, so callers
    (the CLI) can pass ``clustering=False`` whatever the kind.
    """
    import inspect

    for cls, fn in DESCRIBERS.items():
        if isinstance(fed, cls):
            params = inspect.signature(fn).parameters
            if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
                # Options one kind does not have (e.g. `clustering` for RDF).
                kwargs = {k: v for k, v in kwargs.items() if k in params}
            return fn(fed, **kwargs)
    raise TypeError(
        f"No statistics for {type(fed).__name__} "
        f"(registered: {[c.__name__ for c in DESCRIBERS]})"
    )


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


def _fmt(v: Any, wide: bool = False) -> str:
    r"""``v`` as a table cell; a float with 4 decimals, or 1 in a ``wide``
    column (one whose floats reach 10), so a column has one format."""
    if isinstance(v, float):
        return f"{v:,.1f}" if wide else f"{v:.4f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def format_table(stats: dict[str, Any]) -> str:
    r"""A plain-text table: one row per client plus a total row, then the
    overlap matrix when present."""
    rows = [_flatten(c) for c in stats["clients"]]
    total = _flatten(stats.get("overall", {}))
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    wide = {
        k: any(isinstance(r.get(k), float) and abs(r[k]) >= 10 for r in rows)
        for k in cols
    }
    table = [cols] + [[_fmt(r.get(k, ""), wide[k]) for k in cols] for r in rows]
    if total:
        table.append(
            [_fmt(total.get(k, "all" if k == "client" else ""), wide[k]) for k in cols]
        )
    widths = [max(len(row[j]) for row in table) for j in range(len(cols))]
    lines = [
        "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if total:
        lines.insert(len(lines) - 1, lines[1])
    overlap = stats.get("overall", {}).get("overlap")
    if overlap:
        lines += ["", "overlap (entities held by both clients):"]
        w = max(len(_fmt(v)) for row in overlap for v in row)
        lines += ["  ".join(_fmt(v).rjust(w) for v in row) for row in overlap]
    return "\n".join(lines)


__all__ = [
    "describe",
    "describe_kg",
    "clustering_coefficient",
    "format_table",
    "register_describer",
    "DESCRIBERS",
]
