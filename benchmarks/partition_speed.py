r"""Timings and statistics of the FB15k-237 partitions reported in
``docs/partition.md``.

Usage::

    FEDGRAPH_DATA=/path/to/datasets python benchmarks/partition_speed.py \
        [--seeds 10] [--out docs/results/fb15k-237-partition.json]

Prints, for the random relation split of FB15k-237 into 3/5/10 clients (and
of NELL-995 into 3), the mean entities
per client over ``--seeds`` seeds (vs FedE Table 2) with coverage checks; for
the spectral split into 3/5/10 clients, the client triple counts, the
adjusted Rand index against FedLU's published C3/C5/C10 relation clusters
and the runtime; and the statistics of the published partitions.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import adjusted_rand_score

from fedgraph.data import load_dataset, load_federated_folder
from fedgraph.data.io import atomic_write_json
from fedgraph.data.root import get_data_root
from fedgraph.partition import (
    RandomRelationPartitioner,
    SpectralRelationPartitioner,
    describe,
    load_partition,
    save_partition,
)

FEDE = {3: 12595.3, 5: 11260.4, 10: 8340.1}


def relation_labels(fed, graph) -> np.ndarray:
    labels = np.full(graph.num_relations, -1)
    for shard in fed:
        for r in shard.relation_ids.tolist():
            labels[graph.relation_to_id[fed.relation_names[r]]] = shard.client_id
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(2)
    root = get_data_root()
    t0 = time.perf_counter()
    graph = load_dataset("fb15k-237")
    out: dict = {"load_s": time.perf_counter() - t0, "relation": {}, "spectral": {}}
    print(f"{graph}  (load {out['load_s']:.1f}s)")

    for k in (3, 5, 10):
        means, times, checks = [], [], True
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            fed = RandomRelationPartitioner(k, seed=seed)(graph)
            times.append(time.perf_counter() - t0)
            rels = [set(s.relation_ids.tolist()) for s in fed]
            checks &= sum(map(len, rels)) == 237 and len(set().union(*rels)) == 237
            checks &= sum(s.graph.num_triples() for s in fed) == graph.num_triples()
            means.append(float(np.mean([s.num_entities for s in fed])))
        m = np.array(means)
        rec = {
            "mean_entities": {
                "mean": m.mean(),
                "std": m.std(ddof=1),
                "min": m.min(),
                "max": m.max(),
            },
            "fede_table2": FEDE[k],
            "rel_error_of_mean": m.mean() / FEDE[k] - 1,
            "max_abs_rel_error": float(np.max(np.abs(m / FEDE[k] - 1))),
            "coverage_and_disjoint_all_seeds": bool(checks),
            "seconds_mean": float(np.mean(times)),
        }
        out["relation"][k] = rec
        print(
            f"relation K={k}: mean entities {m.mean():,.1f} ± {m.std(ddof=1):,.1f} "
            f"[{m.min():,.0f}, {m.max():,.0f}] vs FedE {FEDE[k]:,} "
            f"({rec['rel_error_of_mean']:+.2%}, worst seed {rec['max_abs_rel_error']:.2%}); "
            f"coverage ok: {checks}; {np.mean(times):.2f}s"
        )

    nell = load_dataset("nell-995")
    m = np.array(
        [
            np.mean(
                [s.num_entities for s in RandomRelationPartitioner(3, seed=seed)(nell)]
            )
            for seed in range(args.seeds)
        ]
    )
    out["nell_995_fed3"] = {
        "mean_entities": {
            "mean": m.mean(),
            "std": m.std(ddof=1),
            "min": m.min(),
            "max": m.max(),
        },
        "fede_table2": 33453.7,
        "rel_error_of_mean": m.mean() / 33453.7 - 1,
    }
    print(
        f"NELL-995 relation K=3: mean entities {m.mean():,.1f} ± {m.std(ddof=1):,.1f} "
        f"[{m.min():,.0f}, {m.max():,.0f}] vs FedE 33,453.7 ({m.mean() / 33453.7 - 1:+.2%})"
    )

    for k in (3, 5, 10):
        published = load_federated_folder(root / "fedlu-fb15k-237" / f"C{k}")
        theirs = relation_labels(published, graph)
        aris, sizes = [], None
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            fed = SpectralRelationPartitioner(k, seed=seed)(graph)
            dt = time.perf_counter() - t0
            ours = np.array(fed.meta["relation_clients"])
            aris.append(adjusted_rand_score(theirs, ours))
            if seed == 0:
                sizes, secs = sorted(s.graph.num_triples() for s in fed), dt
        # train + valid + test (the published folders also hold `unlearn`,
        # a 1% sample of train)
        pub_sizes = sorted(
            sum(s.graph.num_triples(x) for x in ("train", "valid", "test"))
            for s in published
        )
        out["spectral"][k] = {
            "triples_seed0": sizes,
            "published_triples": pub_sizes,
            "ari": {
                "mean": float(np.mean(aris)),
                "min": float(np.min(aris)),
                "max": float(np.max(aris)),
            },
            "seconds_seed0": secs,
        }
        print(
            f"spectral K={k}: triples {sizes} (published {pub_sizes}); ARI vs "
            f"published C{k} mean {np.mean(aris):.4f} [min {np.min(aris):.4f}]; {secs:.1f}s"
        )

    for part in ("C3", "R3"):
        fed = load_federated_folder(root / "fedlu-fb15k-237" / part)
        st = describe(fed)
        out[f"published_{part}"] = st
        print(
            f"published {part}: train {[c['triples']['train'] for c in st['clients']]}, "
            f"entities {[c['entities'] for c in st['clients']]}, "
            f"shared (>=2 clients) {st['overall']['shared_entities']}, "
            f"mean degree {[round(c['mean_degree'], 2) for c in st['clients']]}, "
            f"clustering {[round(c['clustering'], 4) for c in st['clients']]}"
        )

    fed = SpectralRelationPartitioner(3, seed=0)(graph)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        save_partition(fed, Path(tmp) / "c3")
        t1 = time.perf_counter()
        load_partition(Path(tmp) / "c3")
        t2 = time.perf_counter()
        describe(fed)
        t3 = time.perf_counter()
    out["io_s"] = {"save": t1 - t0, "load": t2 - t1, "describe": t3 - t2}
    print(f"C3 save {t1 - t0:.2f}s, load {t2 - t1:.2f}s, describe {t3 - t2:.2f}s")
    if args.out:
        atomic_write_json(args.out, out, indent=2, default=float)


if __name__ == "__main__":
    main()
