r"""Where federation helps: ranks each client's test triples with a finished
Single (``--algorithm independent``) run's model and a finished federated
run's model on the same partition, and splits the MRR of both by how many
*other* clients train on the test triple's head and tail. An Entire
(``--algorithm centralized``) run in place of the federated one gives the
same split for pooling all clients' triples (its results are named
``entire`` instead of ``federated``).

FedE's server averages an entity's embedding over the clients that hold it,
so what a client can gain from the federation reaches it through entities
that other clients also train. A test triple whose head and tail no other
client trains on gets nothing from the others directly (only through the
shared entities its own training neighbours have). This script

1. counts, for every global entity, the clients whose *training* triples
   contain it;
2. puts each test triple of client :math:`c` in the cell
   ``(other clients training its head, other clients training its tail)``,
   ``0 … C-1`` each;
3. ranks the client's test triples with both models under the runs'
   protocol (FedE's: tails, the client's training entities, its own filter;
   for a FedE run the server's aggregated rows, the model the run tested)
   and records per cell the count and both MRRs;
4. with ``--local-rows``, also ranks with each federated client's own table
   at that round (after its local training, before the server averages it:
   the model FedLU's protocol scores), which separates what the averaged
   rows cost a client from what the federated training gave it;
5. records each client's part of its shared entities' training
   occurrences (as head or tail) against the weight FedE's plain mean gives
   it (``1 / holders``), over all its shared entities and over the entities
   of its test triples that every client trains.

The cells partition the test triples, so their count-weighted MRRs are the
runs' own test MRRs (checked by ``tests/eval/test_fede_gain_by_sharing.py``).

``--recorded FILE`` in place of ``--single`` takes the Single run's per-cell
MRRs (and those of the run FILE was made with) from an earlier output of this
script, for when the Single models are no longer on disk. The partition must
be the same: the clients, their test triples, training entities and every
cell's count must match FILE's, else the script stops with exit code 2. The
recorded Single results keep their name, the recorded run's are named
``recorded_<name>`` (``recorded_federated``, ``recorded_local_rows``).

    python benchmarks/fede_gain_by_sharing.py runs/fede/nell995-fed3-rotate-fede \
        --single runs/fede/nell995-fed3-rotate-single --local-rows \
        --out docs/results/fede-gain-by-sharing-nell995-fed3-rotate.json
    python benchmarks/fede_gain_by_sharing.py runs/fede/nell995-fed3-transe-entire \
        --single runs/fede/nell995-fed3-transe-single \
        --out docs/results/fede-gain-by-sharing-nell995-fed3-transe-entire.json
    python benchmarks/fede_gain_by_sharing.py runs/fede/nell995-fed3-rotate-entire \
        --recorded docs/results/fede-gain-by-sharing-nell995-fed3-rotate.json \
        --out docs/results/fede-gain-by-sharing-nell995-fed3-rotate-entire.json
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor


@functools.cache
def _difficulty() -> Any:
    r"""``benchmarks/fede_split_difficulty.py`` as a module (its model loading
    and per-triple ranking)."""
    path = Path(__file__).with_name("fede_split_difficulty.py")
    spec = importlib.util.spec_from_file_location("fede_split_difficulty", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def occurrences(shards: list[Any], num_entities: int) -> Tensor:
    r"""``[C, E]`` float64: how often global entity ``e`` is the head or the
    tail of client ``c``'s training triples."""
    occ = torch.zeros(len(shards), num_entities, dtype=torch.float64)
    for i, shard in enumerate(shards):
        train = shard.graph.triples("train")
        ends = shard.entity_ids[torch.cat([train[:, 0], train[:, 2]])]
        occ[i].index_add_(0, ends, torch.ones(ends.numel(), dtype=torch.float64))
    return occ


def trained_by(shards: list[Any], num_entities: int) -> Tensor:
    r"""``[C, E]`` boolean: client ``c``'s training triples contain global
    entity ``e``."""
    return occurrences(shards, num_entities) > 0


def occurrence_shares(i: int, occ: Tensor, test_ends: Tensor) -> dict[str, float]:
    r"""Client ``i``'s part of its shared entities' training occurrences
    against the weight FedE's plain mean gives it (``1 / holders``):
    ``shared_entities`` averages over the entities it trains with at least
    one other client, ``fully_shared_test`` over the head and tail of its test
    triples whose two entities every client trains (``nan`` when none)."""
    held = occ > 0
    holders = held.sum(0)
    share = occ[i] / occ.sum(0).clamp(min=1)
    shared = held[i] & (holders > 1)
    full = test_ends.view(-1, 2)
    full = full[(holders[full] == occ.shape[0]).all(1)].flatten()
    nan = float("nan")
    return {
        "shared_entities": float(share[shared].mean()) if shared.any() else nan,
        "shared_entities_weight": float((1 / holders[shared]).mean())
        if shared.any()
        else nan,
        "fully_shared_test": float(share[full].mean()) if full.numel() else nan,
        "fully_shared_test_weight": 1 / occ.shape[0],
    }


def sharing_cells(
    test: Tensor, entity_ids: Tensor, others: Tensor, num_clients: int
) -> Tensor:
    r"""``[n]`` cell ``C * others(head) + others(tail)`` of each local test
    triple (``C = num_clients``), ``others`` being ``[E]`` the number of
    *other* clients training each global entity (``0 … C-1``)."""
    return others[entity_ids[test[:, 0]]] * num_clients + others[entity_ids[test[:, 2]]]


def client_cells(
    cells: Tensor, rrs: dict[str, Tensor], num_clients: int
) -> list[dict[str, Any]]:
    r"""Per cell: the count and each model's MRR, ``mrr_<name>`` for every
    ``name`` of ``rrs`` (``nan`` for an empty cell)."""
    n = num_clients * num_clients
    count = torch.bincount(cells, minlength=n)
    sums = {
        name: torch.zeros(n, dtype=torch.float64).index_add_(0, cells, rr)
        for name, rr in rrs.items()
    }
    rows = []
    for c in range(n):
        k = int(count[c])
        row = {"head_others": c // num_clients, "tail_others": c % num_clients, "n": k}
        for name, total in sums.items():
            row[f"mrr_{name}"] = float(total[c] / k) if k else float("nan")
        rows.append(row)
    return rows


def _settings(
    single: Path | None, fed: Path, recorded: dict[str, Any] | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    r"""The runs' recorded settings (``None`` for the Single run when its
    results come from ``recorded``, the loaded ``--recorded`` file), or
    :class:`ValueError` with a one-line message naming the file."""
    s_single = None
    if single is not None:
        s_single, kind = _difficulty().run_settings(single)
        if kind != "independent":
            raise ValueError(
                f"{single / 'results.json'} is a {kind} run; --single takes a "
                "Single (--algorithm independent) run"
            )
    s_fed, kind = _difficulty().run_settings(fed)
    if kind == "independent":
        raise ValueError(
            f"{fed / 'results.json'} is a {kind} run; give a federated run "
            "(FedE, FedProx, …) or an Entire (--algorithm centralized) run"
        )
    other, name = (
        (s_single["protocol"]["name"], f"{single}/results.json")
        if single is not None
        else (recorded["protocol"]["name"], recorded["path"])
    )
    if other != s_fed["protocol"]["name"]:
        raise ValueError(
            f"{name} and {fed}/results.json were evaluated under different protocols"
        )
    return s_single, s_fed


def load_recorded(path: Path) -> dict[str, Any]:
    r"""An earlier output of this script (``--out``), with its path under
    ``"path"``; :class:`ValueError` naming the file when it is not one."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{path} not found") from None
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a JSON file ({e})") from None
    if not isinstance(doc, dict) or not {"protocol", "clients"} <= doc.keys():
        raise ValueError(f"{path}: not an output of fede_gain_by_sharing.py")
    return {**doc, "path": str(path)}


def _recorded_mrrs(row: dict[str, Any]) -> dict[str, Any]:
    r"""``row``'s ``mrr_<name>`` entries: ``mrr_single`` as it is, the
    recorded run's renamed ``mrr_recorded_<name>``."""
    return {
        (k if k == "mrr_single" else f"mrr_recorded_{k[4:]}"): v
        for k, v in row.items()
        if k.startswith("mrr_")
    }


def merge_recorded(
    clients: list[dict[str, Any]], recorded: dict[str, Any]
) -> list[dict[str, Any]]:
    r"""``clients`` with the ``recorded`` output's MRRs per client and cell
    added (:func:`_recorded_mrrs`); :class:`ValueError` naming the file unless
    the clients, their test triples, training entities and cell counts are
    the recorded ones."""
    path = recorded["path"]
    if [c["client"] for c in clients] != [c["client"] for c in recorded["clients"]]:
        raise ValueError(f"{path}: other clients than the run's partition")
    merged = []
    for new, old in zip(clients, recorded["clients"], strict=True):
        for key in ("test_triples", "training_entities"):
            if new[key] != old[key]:
                raise ValueError(
                    f"{path}: client {new['client']} has {old[key]} {key}, the "
                    f"run's partition {new[key]}: not the same partition"
                )
        cell_counts = [
            [(x["head_others"], x["tail_others"], x["n"]) for x in c["cells"]]
            for c in (new, old)
        ]
        if cell_counts[0] != cell_counts[1]:
            raise ValueError(
                f"{path}: client {new['client']}'s sharing cells differ from the "
                "run's partition's"
            )
        pairs = zip(new["cells"], old["cells"], strict=True)
        cells = [{**x, **_recorded_mrrs(y)} for x, y in pairs]
        merged.append({**new, **_recorded_mrrs(old), "cells": cells})
    return merged


def _summary(clients: list[dict[str, Any]], key: str, private: bool | None) -> float:
    r"""Count-weighted MRR over the clients' cells: all (``private`` None),
    both entities trained by no other client (True), or the rest (False)."""
    num = den = 0.0
    for c in clients:
        for cell in c["cells"]:
            both_private = cell["head_others"] == 0 and cell["tail_others"] == 0
            if cell["n"] and (private is None or both_private == private):
                num += cell["n"] * cell[key]
                den += cell["n"]
    return num / den if den else float("nan")


def _federated_models(run: Path, data: str, local_rows: bool) -> Any:
    r"""``(client id, {name: model}, shard)`` per client of a federated run at
    its best validation round: ``"federated"``, the model the run tested
    (FedE's protocol: the server's aggregated rows), and with ``local_rows``
    ``"local_rows"``, the client's own table after that round's local
    training (FedLU's protocol scores this one)."""
    import copy

    from fedgraph.runtime.trained import load_trained_run

    tr = load_trained_run(run, "best", data=data)
    payloads = tr.strategy.configure_evaluate(0, list(tr.clients), "test")
    for c, client in tr.clients.items():
        models = {"federated": client.evaluation_model(payloads[c])}
        if local_rows:
            models["local_rows"] = copy.deepcopy(client.model)
        yield c, models, client.shard


def _rank_all(
    a: argparse.Namespace,
    s_single: dict[str, Any],
    s_run: dict[str, Any],
    name: str,
    protocol: Any,
) -> Any:
    r"""``({name: {client: [n] reciprocal ranks}}, {client: shard}, data)``;
    ``name`` is the run's key: ``"entire"`` for an Entire run, whose pooled
    model is cut to each client's rows, else ``"federated"``."""
    m = _difficulty()
    progress = {
        r: json.loads((r / "progress.json").read_text())["settings"]
        for r in (a.single, a.run)
        if r is not None
    }
    data = a.data or progress[a.run]["data"]
    rr: dict[str, dict[int, Tensor]] = {}
    shards: dict[int, Any] = {}
    if a.single is not None:
        rr["single"] = {}
        single = m._models(a.single, s_single, progress[a.single], data)
        for cid, model, shard in single:
            rr["single"][cid] = m.reciprocal_ranks(model, shard.graph, protocol)
    if name == "entire":
        pooled = m._models(a.run, s_run, progress[a.run], data)
        run_models = ((c, {name: model}, shard) for c, model, shard in pooled)
    else:
        run_models = _federated_models(a.run, data, a.local_rows)
    for cid, models, shard in run_models:
        for key, model in models.items():
            rr.setdefault(key, {})[cid] = m.reciprocal_ranks(
                model, shard.graph, protocol
            )
        shards[cid] = shard
    return rr, shards, data


def _client_report(
    i: int, shard: Any, occ: Tensor, rr: dict[str, Tensor]
) -> dict[str, Any]:
    held = occ > 0
    others = held.sum(0) - held[i].long()
    test = shard.graph.triples("test")
    cells = sharing_cells(test, shard.entity_ids, others, held.shape[0])
    ends = shard.entity_ids[test[:, [0, 2]]]
    return {
        "client": int(shard.client_id),
        "test_triples": int(cells.numel()),
        "training_entities": int(held[i].sum()),
        "training_entities_shared": int((held[i] & (others > 0)).sum()),
        "occurrence_share": occurrence_shares(i, occ, ends.flatten()),
        **{f"mrr_{name}": float(v.mean()) for name, v in rr.items()},
        "cells": client_cells(cells, rr, held.shape[0]),
    }


def _print_client(c: dict[str, Any], name: str) -> None:
    both = sum(x["n"] for x in c["cells"] if not x["head_others"] + x["tail_others"])
    local = (
        f" (own rows {100 * c['mrr_local_rows']:.2f})" if "mrr_local_rows" in c else ""
    )
    print(
        f"client {c['client']}: MRR Single {100 * c['mrr_single']:.2f} -> "
        f"{name} {100 * c[f'mrr_{name}']:.2f}{local}; training entities "
        f"shared {100 * c['training_entities_shared'] / c['training_entities']:.1f} %; "
        f"test triples with both entities private {100 * both / c['test_triples']:.1f} %; "
        f"part of shared entities' occurrences {c['occurrence_share']['shared_entities']:.3f} "
        f"(weight {c['occurrence_share']['shared_entities_weight']:.3f}), in fully shared "
        f"test triples {c['occurrence_share']['fully_shared_test']:.3f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a finished federated or Entire run folder")
    ref = ap.add_mutually_exclusive_group(required=True)
    ref.add_argument("--single", type=Path, help="a finished Single run folder")
    ref.add_argument(
        "--recorded",
        type=Path,
        help="an earlier --out of this script on the same partition, whose "
        "Single (and run) MRRs per cell to compare with",
    )
    ap.add_argument("--data", default=None, help="the partition (default: the run's)")
    ap.add_argument(
        "--local-rows",
        action="store_true",
        help="also rank with each federated client's own table (before averaging)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="JSON file to write")
    a = ap.parse_args(argv)
    try:
        recorded = None if a.recorded is None else load_recorded(a.recorded)
        s_single, s_fed = _settings(a.single, a.run, recorded)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    name = "entire" if s_fed.get("setting") == "centralized" else "federated"
    if a.local_rows and name == "entire":
        print(
            f"error: --local-rows needs a federated run; {a.run / 'results.json'} "
            "is an Entire run",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(a.threads)
    from fedgraph.eval.protocol import resolve_protocol

    protocol = resolve_protocol(s_fed["protocol"]["name"])
    t0 = time.perf_counter()
    rr, shards, data = _rank_all(a, s_single, s_fed, name, protocol)
    order = sorted(shards)
    num_entities = 1 + max(int(shards[c].entity_ids.max()) for c in order)
    occ = occurrences([shards[c] for c in order], num_entities)
    clients = [
        _client_report(i, shards[cid], occ, {k: v[cid] for k, v in rr.items()})
        for i, cid in enumerate(order)
    ]
    if recorded is not None:
        try:
            clients = merge_recorded(clients, recorded)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except (KeyError, TypeError) as e:
            print(
                f"error: {recorded['path']}: not an output of "
                f"fede_gain_by_sharing.py (no {e})",
                file=sys.stderr,
            )
            return 2
    for c in clients:
        _print_client(c, name)
    keys = [k[4:] for k in clients[0] if k.startswith("mrr_")]
    summary = {
        f"{key}_{part}": _summary(clients, f"mrr_{key}", private)
        for key in ["single", *(k for k in keys if k != "single")]
        for part, private in (("all", None), ("both_private", True), ("shared", False))
    }
    out = {
        "run": str(a.run),
        "single": None if a.single is None else str(a.single),
        "recorded": None if recorded is None else recorded["path"],
        "data": str(data),
        "protocol": protocol.to_dict(),
        "weighted": summary,
        "clients": clients,
        "seconds": time.perf_counter() - t0,
        "command": "python benchmarks/fede_gain_by_sharing.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    print(
        f"weighted MRR, Single -> {name}: all "
        f"{100 * summary['single_all']:.2f} -> {100 * summary[f'{name}_all']:.2f}; "
        f"both entities private {100 * summary['single_both_private']:.2f} -> "
        f"{100 * summary[f'{name}_both_private']:.2f}; an entity shared "
        f"{100 * summary['single_shared']:.2f} -> {100 * summary[f'{name}_shared']:.2f}"
    )
    if a.out is not None:
        from fedgraph.data.io import atomic_write_json

        atomic_write_json(a.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
