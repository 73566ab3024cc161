r"""Seconds per federated round against the number of clients, with the
clients' local training run one after another or batched.

FB15k-237 (train + valid + test pooled) is split into ``K`` clients by the
Dirichlet relation partitioner (``DirichletRelationPartitioner``, α = 0.5,
seed 0; the relation partitioners cannot make 100 clients from 237
relations), then FedE trains TransE with FedLU's settings (dim 256, γ = 9,
batch 1,024, 256 shared negatives, Adam lr 1e-4, both corruption modes)
for ``--rounds`` rounds of ``--local-epochs`` local epochs (default 1, to
keep a 100-client round short), once with ``local_training="sequential"``
and once with ``"batched"`` (``fedgraph.runtime.run_simulation``). A round
is the loop's ``train_seconds``: configure → every client's local epochs →
aggregation; no evaluation runs. The first round of a process also pays
one-off kernel compilation, so the table reports the last round, and the
JSON every round, with the process CPU seconds and the load average
(``os.getloadavg``) around it, the mean training loss (the same in both
modes up to float rounding) and the number of optimiser steps a round
takes (sequential: one per client batch and mode; batched: one per batch
of the client with the most batches, and mode).

Resumable and cheap to repeat: results go to ``--out`` (JSON, rewritten
atomically after every measurement); a ``(clients, mode)`` entry already
there is skipped unless ``--force``; ``--plot`` redraws the figure from
the JSON. Example (the table of ``docs/benchmarks.md``)::

    python benchmarks/client_scaling.py --clients 3,10,30,100 --rounds 2 \
        --threads 1 --out docs/results/client-scaling-cpu.json \
        --plot docs/results/client-scaling-cpu.svg
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch
from harness import load_average, machine

from fedgraph.data import load_dataset
from fedgraph.data.io import atomic_write_json
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.partition import DirichletRelationPartitioner
from fedgraph.runtime import run_simulation

MODES = ("sequential", "batched")


def _parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="fb15k-237")
    p.add_argument("--root", default=None, help="data root (default: $FEDGRAPH_DATA)")
    p.add_argument("--clients", default="3,10,30,100", help="comma-separated K")
    p.add_argument("--modes", default=",".join(MODES), help="sequential,batched")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--local-epochs", type=int, default=1)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--dim", type=int, default=256, help="embedding dimension")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", type=Path, required=True, help="JSON results file")
    p.add_argument("--plot", type=Path, default=None, help="figure (.svg/.png)")
    p.add_argument("--force", action="store_true", help="re-measure existing entries")
    a = p.parse_args()
    a.clients = [int(k) for k in a.clients.split(",")]
    a.modes = a.modes.split(",")
    if set(a.modes) - set(MODES) or a.rounds < 1 or min(a.clients) < 1:
        p.error(f"--modes from {MODES}, --rounds >= 1, --clients >= 1")
    return a


def _steps(fed, s: KGESettings) -> dict[str, int]:
    nb = [math.ceil(sh.graph.triples("train").size(0) / s.batch_size) for sh in fed]
    per = 2 * s.local_epochs
    return {"sequential": per * sum(nb), "batched": per * max(nb)}


def measure(graph, k: int, mode: str, a: argparse.Namespace) -> dict:
    r"""``a.rounds`` FedE rounds on ``graph`` split into ``k`` clients."""
    t0 = time.perf_counter()
    fed = DirichletRelationPartitioner(k, alpha=a.alpha, seed=a.seed)(graph)
    partition_seconds = time.perf_counter() - t0
    s = KGESettings(
        dim=a.dim, local_epochs=a.local_epochs, seed=a.seed, device=a.device
    )
    strategy, clients = build_kge_federation("fede", fed, s)
    rounds: list[dict] = []
    mark = {"cpu": time.process_time(), "load": load_average()[0]}

    def on_round(entry: dict) -> None:
        cpu = time.process_time()
        rounds.append(
            {
                "round": entry["round"],
                "seconds": entry["train_seconds"],
                "cpu_seconds": cpu - mark["cpu"],
                "loadavg_1min": [mark["load"], load_average()[0]],
                "loss": entry["train"].get("loss"),
            }
        )
        mark.update(cpu=time.process_time(), load=load_average()[0])

    run_simulation(
        strategy,
        clients,
        num_rounds=a.rounds + 1,
        stop_after=a.rounds,  # returns before the final evaluation
        eval_every=10**9,
        progress=False,
        test=False,
        on_round=on_round,
        local_training=mode,
    )
    train = [sh.graph.triples("train").size(0) for sh in fed]
    return {
        "clients": k,
        "mode": mode,
        "seconds_per_round": rounds[-1]["seconds"],
        "rounds": rounds,
        "steps_per_round": _steps(fed, s)[mode],
        "partition_seconds": partition_seconds,
        "train_triples": {"total": sum(train), "min": min(train), "max": max(train)},
        "entity_rows": sum(sh.num_entities for sh in fed),
    }


def plot(results: dict, path: Path) -> None:
    from fedgraph.report.plots import line_plot

    series = {}
    for mode in MODES:
        entries = sorted(
            (e for e in results["entries"].values() if e["mode"] == mode),
            key=lambda e: e["clients"],
        )
        if entries:
            x = [e["clients"] for e in entries]
            series[f"{mode}: wall s"] = (x, [e["seconds_per_round"] for e in entries])
            cpu = [e["rounds"][-1]["cpu_seconds"] for e in entries]
            series[f"{mode}: process CPU s"] = (x, cpu)
    s = results["settings"]
    line_plot(
        series,
        path,
        xlabel=f"clients (Dirichlet α = {s['alpha']:g} split of {s['dataset']})",
        ylabel="seconds per round",
        title=f"FedE/TransE, {s['local_epochs']} local epoch(s), "
        f"{s['threads']} thread(s), {s['device']}",
        xlog=True,
    )


def main() -> None:
    a = _parse()
    torch.set_num_threads(a.threads)
    results = json.loads(a.out.read_text()) if a.out.exists() else {"entries": {}}
    results["settings"] = {
        k: getattr(a, k)
        for k in (
            "dataset",
            "alpha",
            "seed",
            "local_epochs",
            "rounds",
            "threads",
            "dim",
        )
    } | {"device": a.device, "model": "transe", "algorithm": "fede"}
    results["machine"] = machine()
    graph = load_dataset(a.dataset, root=a.root)
    for k in a.clients:
        for mode in a.modes:
            key = f"{k}/{mode}"
            if key in results["entries"] and not a.force:
                continue
            entry = measure(graph, k, mode, a)
            entry["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            results["entries"][key] = entry
            atomic_write_json(a.out, results)
            print(json.dumps({key: entry["seconds_per_round"]}), flush=True)
    atomic_write_json(a.out, results)
    if a.plot is not None:
        plot(results, a.plot)


if __name__ == "__main__":
    main()
