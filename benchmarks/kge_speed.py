r"""Speed of the KGE core on each client of a federated KG.

Prints JSON::

    {"transe": {"client0": {"train_seconds_per_iteration": …,
                            "train_seconds_per_epoch": …, "eval_seconds": …,
                            "eval_ms_per_query": …, …}, …},
     "rotate": {…}, "machine": {…}, "settings": {…}}

``train_seconds_per_epoch`` = seconds per iteration (mean of ``--iterations``
timed steps after ``--warmup``) × iterations per epoch (one head-batch and one
tail-batch step per batch of ``--batch-size`` training triples, as the FedLU
code); ``eval_seconds`` = one filtered validation pass, head and tail,
candidates = the client's entities, filter = its train + valid + test (timed on
the first ``--eval-triples`` valid triples and scaled to the full split when
given).

Example::

    python benchmarks/kge_speed.py --data $FEDGRAPH_DATA/fedlu-fb15k-237/R3 --threads 2
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from harness import machine

from fedgraph.data import load_federated_folder
from fedgraph.data.root import get_data_root
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.models import SigmoidNSLoss, UniformNegativeSampler, resolve_model
from fedgraph.models.losses import NSSALoss


def bench_client(graph, model_name, a) -> dict:
    torch.manual_seed(0)
    m = resolve_model(
        model_name, graph.num_entities, graph.num_relations, a.dim, gamma=a.gamma
    )
    opt = torch.optim.Adam(m.parameters(), lr=1e-4, fused=True)
    loss = NSSALoss(1.0) if model_name == "rotate" else SigmoidNSLoss()
    sampler = UniformNegativeSampler(
        graph.num_entities, a.num_negatives, shared=not a.per_positive
    )
    gen = torch.Generator().manual_seed(0)
    train = graph.triples("train")
    times, cpu = [], []
    for i in range(a.warmup + a.iterations):
        batch = train[torch.randint(train.size(0), (a.batch_size,), generator=gen)]
        mode = ("head-batch", "tail-batch")[i % 2]
        t0, c0 = time.perf_counter(), time.process_time()
        neg = sampler.sample(batch, mode, gen)
        pos_s, neg_s = m.score_batch(batch, neg, mode)
        value = loss(pos_s, neg_s)
        opt.zero_grad(set_to_none=True)
        value.backward()
        opt.step()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    per_iter = sum(times) / len(times)
    iters = 2 * -(-train.size(0) // a.batch_size)
    flt = TripleFilter(
        graph.all_triples(("train", "valid", "test")),
        graph.num_entities,
        graph.num_relations,
    )
    valid = graph.triples("valid")
    sub = valid if not a.eval_triples else valid[: a.eval_triples]
    # One-time per process: the compiled L1 kernel is specialised for no-grad
    # calls on first use (fedgraph.models.kge.l1); timed separately.
    t0 = time.perf_counter()
    rank_triples(m, sub[:8], filter=flt, batch_size=a.eval_batch_size)
    warmup = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    st = rank_triples(m, sub, filter=flt, batch_size=a.eval_batch_size)
    ev, ev_cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "train_seconds_per_iteration": per_iter,
        "iterations_per_epoch": iters,
        "train_seconds_per_epoch": per_iter * iters,
        "eval_seconds": ev * valid.size(0) / sub.size(0),
        "eval_ms_per_query": 1000 * ev / st.num_queries,
        "train_cpu_seconds_per_iteration": sum(cpu) / len(cpu),
        "eval_cpu_ms_per_query": 1000 * ev_cpu / st.num_queries,
        "eval_queries_timed": st.num_queries,
        "eval_warmup_seconds": warmup,
        "eval_queries_full": 2 * valid.size(0),
        "num_entities": graph.num_entities,
        "train_triples": int(train.size(0)),
    }


def shared_vs_per_positive(a) -> dict:
    r"""Accuracy effect of shared negatives: the same KGETrainer run on one
    KG folder (``--accuracy``) with K negatives per positive vs K per batch."""
    from fedgraph.data import load_dataset
    from fedgraph.training.kge_trainer import KGETrainer

    kg = load_dataset(a.accuracy)
    out = {}
    for shared in (True, False):
        torch.manual_seed(0)
        m = resolve_model(
            "transe", kg.num_entities, kg.num_relations, a.dim, gamma=a.gamma
        )
        tr = KGETrainer(
            m,
            kg,
            lr=a.accuracy_lr,
            batch_size=a.batch_size,
            num_negatives=a.num_negatives,
            shared_negatives=shared,
            eval_every=5,
            patience=3,
            max_epochs=a.accuracy_epochs,
        )
        t0 = time.perf_counter()
        info = tr.fit()
        test = tr.evaluate("test").compute()
        out["shared" if shared else "per-positive"] = {
            "best_epoch": info["best_epoch"],
            "epochs": info["epochs"],
            "valid_mrr": tr.best_mrr,
            "test": test,
            "train_seconds": tr.train_seconds,
            "wall_seconds": time.perf_counter() - t0,
        }
    return {"dataset": a.accuracy, "lr": a.accuracy_lr, **out}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        default=str(get_data_root() / "fedlu-fb15k-237" / "R3"),
    )
    p.add_argument("--models", default="transe,rotate")
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--gamma", type=float, default=9.0)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument(
        "--per-positive",
        action="store_true",
        help="K negatives per positive (FedLU code) instead of shared",
    )
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument(
        "--eval-triples",
        type=int,
        default=0,
        help="time this many valid triples and scale (0 = all)",
    )
    p.add_argument("--eval-batch-size", type=int, default=512)
    p.add_argument("--clients", default="", help="comma list (default: all)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--accuracy",
        default="",
        help="a KG folder/name: compare shared vs per-positive negatives",
    )
    p.add_argument("--accuracy-lr", type=float, default=1e-3)
    p.add_argument("--accuracy-epochs", type=int, default=200)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.accuracy:
        print(json.dumps(shared_vs_per_positive(a), indent=1))
        return
    fkg = load_federated_folder(a.data)
    ids = [int(c) for c in a.clients.split(",")] if a.clients else range(len(fkg))
    out: dict = {}
    for name in a.models.split(","):
        out[name] = {f"client{k}": bench_client(fkg[k].graph, name, a) for k in ids}
    out["machine"] = machine()  # its load average: at the end
    out["settings"] = {k: v for k, v in vars(a).items()}
    out["settings"]["negatives"] = (
        "per-positive" if a.per_positive else "shared per batch"
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
