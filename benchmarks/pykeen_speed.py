r"""fedgraph's KGE core against PyKEEN on the same client, settings and machine.

TransE (L1, dim 256), batch 1,024 positives, 256 negatives per positive
(PyKEEN's sLCWA with the basic sampler; fedgraph with ``per_positive``, the
papers' setting, and with its default of one negative set shared by the
batch), Adam lr 1e-4; then filtered ranking of validation triples, head and
tail, against the client's entities, filtered by its train + valid + test
triples (PyKEEN's ``RankBasedEvaluator``; fedgraph's ``rank_triples``). Both
run in this one process, one after the other, with the same thread count.
Prints JSON (``--out`` also writes it)::

    python benchmarks/pykeen_speed.py --data $FEDGRAPH_DATA/fedlu-fb15k-237/R3 \
        --client 0 --threads 1 --out docs/results/pykeen-speed-r3-client0.json

Needs ``pip install pykeen`` (not a fedgraph dependency).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path
from types import SimpleNamespace

import torch
from harness import machine

from fedgraph.data import load_federated_folder
from fedgraph.data.io import atomic_write_json


def pykeen_client(graph, a) -> dict:
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.losses import SoftplusLoss
    from pykeen.models import TransE
    from pykeen.sampling import BasicNegativeSampler
    from pykeen.training import SLCWATrainingLoop
    from pykeen.triples import CoreTriplesFactory

    def loop_on(triples):
        tf = CoreTriplesFactory.create(
            mapped_triples=triples,
            num_entities=graph.num_entities,
            num_relations=graph.num_relations,
        )
        model = TransE(
            triples_factory=tf,
            embedding_dim=a.dim,
            scoring_fct_norm=1,
            loss=SoftplusLoss(),
            random_seed=0,
        )
        loop = SLCWATrainingLoop(
            model=model,
            triples_factory=tf,
            optimizer=torch.optim.Adam(model.parameters(), lr=1e-4),
            negative_sampler=BasicNegativeSampler,
            negative_sampler_kwargs={"num_negs_per_pos": a.num_negatives},
        )
        return model, loop, tf

    train = graph.triples("train")
    gen = torch.Generator().manual_seed(0)
    pick = torch.randint(
        train.size(0), ((a.warmup + a.iterations) * a.batch_size,), generator=gen
    )
    # warm-up (allocation, first calls) on a model of its own, then a fresh
    # model timed over `iterations` full batches (one epoch of them)
    _, warm, warm_tf = loop_on(train[pick[: a.warmup * a.batch_size]])
    warm.train(triples_factory=warm_tf, num_epochs=1,
               batch_size=a.batch_size, use_tqdm=False)  # fmt: skip
    model, loop, tf = loop_on(train[pick[a.warmup * a.batch_size :]])
    t0, c0 = time.perf_counter(), time.process_time()
    losses = loop.train(triples_factory=tf, num_epochs=1,
                        batch_size=a.batch_size, use_tqdm=False)  # fmt: skip
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert len(losses) == 1, "PyKEEN trained no epoch"
    n_iter = a.iterations
    valid = graph.triples("valid")[: a.eval_triples]
    evaluator = RankBasedEvaluator(filtered=True)
    filt = [graph.triples(s) for s in ("train", "valid", "test")]
    t1, c1 = time.perf_counter(), time.process_time()
    res = evaluator.evaluate(
        model, valid, batch_size=a.eval_batch_size,
        additional_filter_triples=filt, use_tqdm=False,
    )  # fmt: skip
    ev, ev_cpu = time.perf_counter() - t1, time.process_time() - c1
    return {
        "train_seconds_per_iteration": wall / n_iter,
        "train_cpu_seconds_per_iteration": cpu / n_iter,
        "eval_ms_per_query": 1000 * ev / (2 * valid.size(0)),
        "eval_cpu_ms_per_query": 1000 * ev_cpu / (2 * valid.size(0)),
        "valid_mrr_untrained": float(
            res.get_metric("both.realistic.inverse_harmonic_mean_rank")
        ),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data", required=True, help="a federated KG folder (e.g. FedLU's R3)"
    )
    p.add_argument("--client", type=int, default=0)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--eval-triples", type=int, default=512)
    p.add_argument("--eval-batch-size", type=int, default=256)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    graph = load_federated_folder(a.data)[a.client].graph
    spec = importlib.util.spec_from_file_location(
        "kge_speed", Path(__file__).with_name("kge_speed.py")
    )
    kge_speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kge_speed)
    out = {"pykeen": pykeen_client(graph, a)}
    for label, per_positive in (
        ("fedgraph_per_positive", True),
        ("fedgraph_shared", False),
    ):
        args = SimpleNamespace(
            dim=a.dim, gamma=9.0, batch_size=a.batch_size, num_negatives=a.num_negatives,
            per_positive=per_positive, iterations=a.iterations, warmup=a.warmup,
            eval_triples=a.eval_triples, eval_batch_size=a.eval_batch_size,
        )  # fmt: skip
        out[label] = kge_speed.bench_client(graph, "transe", args)
    import pykeen

    out["settings"] = {**vars(a), "out": str(a.out), "data": str(a.data)}
    out["machine"] = {
        **machine(),
        "pykeen": pykeen.get_version(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    text = json.dumps(out, indent=1)
    print(text)
    if a.out is not None:
        atomic_write_json(a.out, out)


if __name__ == "__main__":
    main()
