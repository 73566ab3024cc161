r"""Seconds per FedE or FedLU round and per validation pass on a FedLU partition
(TransE, FedLU settings: dim 256, batch 1024, 256 negatives, 3 local epochs,
Adam, both corruption modes, head + tail filtered ranking).

``--algorithm fedlu`` times FedLU's local step (one step of the local and one
of the global model with mutual distillation) and ranks with both models, as
its validation does (local and global metrics).

Times ``--steps`` real local training steps and ``--queries`` real ranking
queries per client with the production code (:class:`KGEClient`,
:func:`train_epochs`, :func:`rank_triples`) and one real aggregation
(:meth:`FedE.aggregate_train`), then extrapolates to a full round
(``local_epochs × ⌈n_train / batch⌉ × 2`` steps per client) and a full
validation pass (``2 × n_valid`` queries per client); ``--full-validation``
also ranks every validation triple of every client. Reports wall seconds and
process CPU seconds (the latter is less sensitive to other jobs on a shared
machine) and the load average. ``--full-round`` also runs one complete round.

Usage::

    python benchmarks/fed_speed.py --data $FEDGRAPH_DATA/fedlu-fb15k-237/R3 \
        --threads 2 > runs/fed_speed_r3.json
"""

from __future__ import annotations

import argparse
import json
import math
import time

from harness import load_average, machine


class Clock:
    def __enter__(self) -> Clock:
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.w
        self.cpu = time.process_time() - self.c


def _fit_steps(client, payload, steps: int, settings):  # noqa: ANN001, ANN202
    """``steps`` real local steps: a one-epoch fit on a prefix of the client's
    training triples (two steps, head- and tail-batch, per batch)."""
    full, weights = client.train_triples, client.weights
    n_sub = max(1, steps // 2) * settings.batch_size
    client.train_triples = full[:n_sub]
    client.weights = None if weights is None else weights[:n_sub]
    client.local_epochs = 1
    try:
        return client.fit(payload.detach())
    finally:
        client.train_triples, client.weights = full, weights
        client.local_epochs = settings.local_epochs


def _models(client):  # noqa: ANN001, ANN202
    """The models a client's validation ranks: FedLU's local and global."""
    glob = getattr(client, "global_model", None)
    return [client.model] if glob is None else [client.model, glob]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", default="transe")
    parser.add_argument("--algorithm", default="fede", choices=("fede", "fedlu"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per client")
    parser.add_argument(
        "--queries", type=int, default=500, help="timed triples per client"
    )
    parser.add_argument("--full-round", action="store_true")
    parser.add_argument("--full-validation", action="store_true")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from fedgraph.data import load_dataset
    from fedgraph.eval.ranking import rank_triples
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation

    with Clock() as t_load:
        fed = load_dataset(args.data)
    settings = KGESettings(model=args.model)
    with Clock() as t_build:
        strategy, clients = build_kge_federation(args.algorithm, fed, settings)
        strategy.register({c: cl.register() for c, cl in clients.items()})
    payloads = strategy.configure_train(1, sorted(clients))

    out: dict = {
        "data": str(args.data),
        "algorithm": args.algorithm,
        "settings": settings.to_dict(),
        **machine(),
        "load_average_start": load_average(),
        "load_seconds": t_load.wall,
        "build_seconds": t_build.wall,
        "clients": [],
    }
    # One-time per process: compile the L1 kernels (fedgraph.models.kge.l1)
    # for training and for no-grad evaluation; reported, not extrapolated.
    from fedgraph.models.kge.l1 import l1_distance

    with Clock() as t_warm:
        q = torch.randn(8, settings.dim, requires_grad=True)
        l1_distance(q, torch.randn(4, settings.dim)).sum().backward()
        with torch.no_grad():
            l1_distance(torch.randn(8, settings.dim), torch.randn(4, settings.dim))
        # and to the real shapes (a 2-step fit and a few queries on client 0)
        first = clients[min(clients)]
        _fit_steps(first, payloads[min(clients)], 2, settings)
        for model in _models(first):
            rank_triples(
                model, first.shard.graph.triples("valid")[:8], filter=first.filter
            )
    out["kernel_warmup_seconds"] = t_warm.wall
    round_wall = round_cpu = eval_wall = eval_cpu = 0.0
    replies = {}
    for c, client in sorted(clients.items()):
        n_train = int(client.train_triples.size(0))
        steps_round = (
            settings.local_epochs * math.ceil(n_train / settings.batch_size) * 2
        )
        with Clock() as t_fit:
            replies[c] = _fit_steps(client, payloads[c], args.steps, settings)
        per_step_w, per_step_c = t_fit.wall / args.steps, t_fit.cpu / args.steps
        valid = client.shard.graph.triples("valid")
        with Clock() as t_eval:
            for model in _models(client):
                rank_triples(model, valid[: args.queries], filter=client.filter)
        nq = 2 * min(args.queries, valid.size(0))
        per_q_w, per_q_c = t_eval.wall / nq, t_eval.cpu / nq
        row = {
            "client": c,
            "entities": client.shard.num_entities,
            "train": n_train,
            "valid": int(valid.size(0)),
            "steps_per_round": steps_round,
            "seconds_per_step": per_step_w,
            "cpu_seconds_per_step": per_step_c,
            "models_ranked": len(_models(client)),
            "seconds_per_query": per_q_w,
            "cpu_seconds_per_query": per_q_c,
        }
        out["clients"].append(row)
        round_wall += per_step_w * steps_round
        round_cpu += per_step_c * steps_round
        eval_wall += per_q_w * 2 * valid.size(0)
        eval_cpu += per_q_c * 2 * valid.size(0)
    with Clock() as t_agg:
        strategy.aggregate_train(1, replies)
    out.update(
        aggregate_seconds=t_agg.wall,
        seconds_per_round=round_wall + t_agg.wall,
        cpu_seconds_per_round=round_cpu + t_agg.cpu,
        seconds_per_validation=eval_wall,
        cpu_seconds_per_validation=eval_cpu,
    )
    if args.full_round:  # one complete round: configure, 3 local epochs, aggregate
        strategy, clients = build_kge_federation(args.algorithm, fed, settings)
        strategy.register({c: cl.register() for c, cl in clients.items()})
        with Clock() as t_round:
            sent = strategy.configure_train(1, sorted(clients))
            strategy.aggregate_train(
                1, {c: clients[c].fit(p.detach()) for c, p in sent.items()}
            )
        out.update(full_round_seconds=t_round.wall, full_round_cpu_seconds=t_round.cpu)
    if args.full_validation:  # every validation triple, head and tail, all models
        with Clock() as t_valid:
            for client in clients.values():
                for model in _models(client):
                    rank_triples(
                        model, client.shard.graph.triples("valid"), filter=client.filter
                    )
        out.update(
            full_validation_seconds=t_valid.wall,
            full_validation_cpu_seconds=t_valid.cpu,
        )
    out["load_average_end"] = load_average()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
