r"""``fedgraph audit``: runs an attack of :mod:`fedgraph.privacy.attacks` on
a run's recorded uploads and scores it against the clients' true data."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.kge.fedr import RELATION
from fedgraph.privacy.alignment import entity_name, entity_tokens
from fedgraph.privacy.attacks import (
    ATTACKS,
    ServerView,
    membership_inference,
    triple_inference,
)
from fedgraph.privacy.record import load_registration, load_round
from fedgraph.privacy.secagg_masks import MASKED
from fedgraph.privacy.setup import UPLOADS_DIR, alignment_secret


def _token_map(run_dir: Path, fed: Any) -> tuple[Tensor, Tensor]:
    try:
        secret = alignment_secret(run_dir, create=False)
    except FileNotFoundError as exc:  # a deployment keeps it on the nodes
        raise FileNotFoundError(
            f"{exc}: auditing private alignment maps tokens back to entities "
            "with the federation secret; for a Flower deployment copy a client "
            "node's secret file there"
        ) from None
    names = [entity_name(i, fed.entity_names) for i in range(fed.num_entities)]
    tokens = entity_tokens(names, secret)
    order = torch.argsort(tokens)
    return tokens[order], order


def server_views(
    run_dir: str | os.PathLike[str],
    fed: Any,
    privacy: dict[str, Any],
    server_round: int | None = None,
) -> tuple[int, dict[int, ServerView]]:
    r"""The recorded round and, per client, what the server holds
    (:class:`~fedgraph.privacy.attacks.ServerView`)."""
    run_dir = Path(run_dir)
    rec = _load_record(run_dir, server_round)
    return int(rec["round"]), _entity_views(rec, run_dir, fed, privacy)


def _load_record(run_dir: Path, server_round: int | None) -> dict[str, Any]:
    rec = load_round(run_dir / UPLOADS_DIR, server_round)
    load_registration(run_dir / UPLOADS_DIR)  # the registrations must be there
    return rec


def _entity_views(
    rec: dict[str, Any], run_dir: Path, fed: Any, privacy: dict[str, Any]
) -> dict[int, ServerView]:
    aligned = bool(privacy.get("private_alignment"))
    tokens = order = None
    if aligned:
        tokens, order = _token_map(run_dir, fed)
    views = {}
    uploads = rec["uploads"]
    for c, up in uploads.items():
        arrays, row_ids = up["arrays"], up["row_ids"]
        if ENTITY in arrays and ENTITY in row_ids:
            ids = row_ids[ENTITY].long()
            membership = None
            if aligned:
                pos = torch.searchsorted(tokens, ids).clamp_max(tokens.numel() - 1)
                if not torch.equal(tokens[pos], ids):
                    raise ValueError(f"{run_dir}: tokens that match no entity")
                ids = order[pos]
            else:
                membership = torch.zeros(fed.num_entities, dtype=torch.float64)
                membership[ids] = 1.0
            views[int(c)] = ServerView(ids, arrays[ENTITY], "upload", membership)
        elif MASKED in arrays and rec["aggregate"]["entity"] is not None:
            agg = rec["aggregate"]
            counts = agg["counts"]
            held = (counts > 0).nonzero().squeeze(1)
            views[int(c)] = ServerView(
                held,
                agg["entity"][held],
                "aggregate",
                counts.double() / len(uploads),
            )
        else:
            views[int(c)] = ServerView(None, None, "none", None)
    return views


def relation_views(
    rec: dict[str, Any], num_relations: int, aligned: bool
) -> dict[int, ServerView]:
    r"""Per client of a relation-sharing run (FedR), what the server holds
    about which relations it has: the ids it uploads, in the clear (a
    certainty); the holder counts over the clients, divided by their number,
    under secure aggregation; no information under private alignment (keyed
    tokens). Empty for a run that shares entity rows.

    Args:
        rec (dict): a recorded round (:func:`~fedgraph.privacy.record.load_round`).
        num_relations (int): the federation's relation vocabulary.
        aligned (bool): whether the run used private alignment.
    """
    uploads, agg = rec["uploads"], rec["aggregate"]
    views = {}
    for c, up in uploads.items():
        ids = up["row_ids"].get(RELATION)
        if ids is not None:
            score = None
            if not aligned:
                score = torch.zeros(num_relations, dtype=torch.float64)
                score[ids.long()] = 1.0
            views[int(c)] = ServerView(None, None, "upload", score)
        elif MASKED in up["arrays"] and agg.get("relation") is not None:
            score = agg["counts"].double() / len(uploads)
            views[int(c)] = ServerView(None, None, "aggregate", score)
    return views


def _recorded_settings(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    r"""The settings of the run in ``run_dir`` and its privacy settings (it
    must have recorded its uploads): ``progress.json`` of a ``fedgraph
    train`` run, else ``results.json`` (a Flower deployment's ``out``
    folder, written when the run ends)."""
    for name in ("progress.json", "results.json"):
        meta_file = run_dir / name
        if meta_file.is_file():
            break
    else:
        raise FileNotFoundError(
            f"{run_dir} holds neither progress.json nor results.json: is it a "
            "`fedgraph train` run or the `out` folder of a finished Flower run?"
        )
    meta = json.loads(meta_file.read_text())["settings"]
    privacy = meta.get("privacy") or {}
    if not privacy.get("record_uploads"):
        raise ValueError(
            f"`{run_dir}` did not record uploads: train with --record-uploads "
            "(a Flower deployment: run-config key `privacy.record-uploads`)"
        )
    return meta, privacy


def _attack_client(
    attack: str,
    view: Any,
    shard: Any,
    fed: Any,
    meta: dict[str, Any],
    known_fraction: float,
    seed: int,
) -> dict[str, Any]:
    r"""``attack`` on one client from the server's ``view`` of it."""
    c = int(shard.client_id)
    if attack == "triple-inference":
        splits = [s for s in ("train", "valid", "test") if s in shard.graph.split_names]
        return triple_inference(
            view,
            shard.global_triples("train"),
            torch.cat([shard.global_triples(s) for s in splits]),
            num_entities=fed.num_entities,
            num_relations=fed.num_relations,
            model=meta.get("model", "transe"),
            gamma=float(meta.get("gamma", 9.0)),
            known_fraction=known_fraction,
            seed=seed * 7919 + c,
        )
    return membership_inference(view, shard.entity_ids, fed.num_entities)


def _mean_of(rows: list[dict[str, float]]) -> dict[str, float]:
    r"""Each metric's mean over the clients where it is defined (AUC: both
    classes)."""
    out = {}
    for k in ("precision", "recall", "f1", "accuracy", "auc"):
        vals = [float(r[k]) for r in rows if k in r and not math.isnan(float(r[k]))]
        out[k] = sum(vals) / len(vals) if vals else float("nan")
    return out


def _relation_membership(views: dict[int, ServerView], fed: Any) -> dict[str, Any]:
    r"""The membership attack on the relations of each client in ``views``
    (a relation-sharing run's uploads), with the mean and baseline."""
    clients = {
        str(shard.client_id): membership_inference(
            views[int(shard.client_id)],
            shard.relation_ids,
            fed.num_relations,
            unit="relations",
        )
        for shard in fed.shards
        if int(shard.client_id) in views
    }
    return {
        "clients": clients,
        "mean": _mean_of(list(clients.values())),
        "baseline": _mean_of([r["baseline"] for r in clients.values()]),
    }


def run_audit(
    run_dir: str | os.PathLike[str],
    attack: str,
    *,
    data: str | None = None,
    server_round: int | None = None,
    known_fraction: float = 0.1,
    seed: int = 0,
) -> dict[str, Any]:
    r"""Runs ``attack`` on the run in ``run_dir``; returns the report
    (per-client metrics, their mean, the random-guess baseline)."""
    from fedgraph.runtime.trained import load_kge_federation

    if attack not in ATTACKS:
        raise ValueError(f"`--attack` must be one of {list(ATTACKS)} (got {attack!r})")
    run_dir = Path(run_dir)
    meta, privacy = _recorded_settings(run_dir)
    fed = load_kge_federation(meta["data"] if data is None else data)
    rec = _load_record(run_dir, server_round)
    views = _entity_views(rec, run_dir, fed, privacy)
    clients = {}
    for shard in fed.shards:
        c = int(shard.client_id)
        if c not in views:
            continue
        res = _attack_client(attack, views[c], shard, fed, meta, known_fraction, seed)
        clients[str(c)] = res
    mean = _mean_of(list(clients.values()))
    base = _mean_of([r["baseline"] for r in clients.values()])
    extra: dict[str, Any] = {}
    if attack == "triple-inference":
        extra["knowledge_only"] = _mean_of(
            [r["knowledge_only"] for r in clients.values() if "knowledge_only" in r]
        )
    elif rel := relation_views(
        rec, fed.num_relations, bool(privacy.get("private_alignment"))
    ):
        extra["relations"] = _relation_membership(rel, fed)
    return {
        "attack": attack,
        "run": str(run_dir),
        "algorithm": meta.get("algorithm"),
        "privacy": privacy,
        "round": int(rec["round"]),
        "attacker_knowledge": (
            f"the server's view of each client ({sorted({v.source for v in views.values()})}), "
            f"the KGE score function and {known_fraction:.0%} of the victim's training triples"
            if attack == "triple-inference"
            else "what the server received (ids, tokens, or presence counts)"
        ),
        "known_fraction": known_fraction if attack == "triple-inference" else None,
        "seed": seed,
        "clients": clients,
        "mean": mean,
        "baseline": base,
        **extra,
    }


__all__ = ["run_audit", "server_views", "relation_views"]
