r"""One epoch of all-entity training: fedgraph's ``kvsall`` and ``1vsall``
regimes against PyKEEN's LCWA training loop, same data, model and settings,
back to back in one process.

ComplEx (complex dimension ``--dim``), reciprocal relations (PyKEEN:
``create_inverse_triples=True``; fedgraph: ``reciprocal=True``), the
cross-entropy over all entities (``--loss ce``; ``bce`` for the binary one),
batches of ``--batch-size`` queries, Adam with learning rate 1e-3, no
regulariser, ``--threads`` torch threads. The data are ``--triples`` training
triples drawn (seed 0) from a KG folder's ``train.txt`` (FB15k-237 by
default), scored against all of the KG's entities.

What one epoch holds:

- PyKEEN's LCWA and fedgraph's ``kvsall`` train the same rows: each distinct
  query ``(h, r, ?)`` of the triples and their inverses, with all its known
  answers as the target. Their seconds per epoch compare directly.
- fedgraph's ``1vsall`` trains one row per triple and per inverse (a query
  with several answers is a row per answer), so its epoch holds more rows;
  compare its seconds per row.

Each framework first trains one epoch on a small warm-up sample (allocation,
first calls) with a model of its own. Prints JSON (``--out`` also writes it)::

    python benchmarks/pykeen_1vsall_speed.py --data $FEDGRAPH_DATA/fb15k-237 \
        --triples 10000 --threads 1 --out docs/results/pykeen-1vsall-speed-fb15k-237.json

Needs ``pip install pykeen`` (not a fedgraph dependency).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from harness import load_average, machine

from fedgraph.data.io import atomic_write_json
from fedgraph.data.triples import read_triple_folder
from fedgraph.models.kge import resolve_model
from fedgraph.training.kge_trainer import train_epochs
from fedgraph.training.regimes import resolve_regime


def timed_epoch(train_one) -> dict:
    r"""Wall and CPU seconds of ``train_one()`` (one epoch)."""
    t0, c0 = time.perf_counter(), time.process_time()
    loss = train_one()
    return {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
        "loss": float(loss),
    }


def pykeen_epoch(triples, graph, a) -> dict:
    r"""One epoch of PyKEEN's LCWA loop on ``triples`` (with inverses)."""
    from pykeen.losses import BCEWithLogitsLoss, CrossEntropyLoss
    from pykeen.models import ComplEx
    from pykeen.training import LCWATrainingLoop
    from pykeen.triples import CoreTriplesFactory

    def loop_on(rows):
        tf = CoreTriplesFactory.create(
            mapped_triples=rows,
            num_entities=graph.num_entities,
            num_relations=graph.num_relations,
            create_inverse_triples=True,
        )
        loss = CrossEntropyLoss() if a.loss == "ce" else BCEWithLogitsLoss()
        model = ComplEx(
            triples_factory=tf, embedding_dim=a.dim, loss=loss, random_seed=0
        )
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        return LCWATrainingLoop(model=model, triples_factory=tf, optimizer=opt), tf

    def run(rows):
        loop, tf = loop_on(rows)
        losses = loop.train(triples_factory=tf, num_epochs=1,
                            batch_size=a.batch_size, use_tqdm=False)  # fmt: skip
        if len(losses) != 1:
            raise RuntimeError(f"PyKEEN trained {len(losses)} epochs, not 1")
        return losses[0]

    run(triples[: a.warmup])
    out = timed_epoch(lambda: run(triples))
    # LCWA's rows: the distinct (h, r) pairs of the triples and of their inverses
    out["rows"] = int(
        torch.unique(triples[:, [0, 1]], dim=0).size(0)
        + torch.unique(triples[:, [2, 1]], dim=0).size(0)
    )
    return out


def fedgraph_epoch(triples, graph, regime_name: str, a) -> dict:
    r"""One epoch of fedgraph's ``regime_name`` regime on ``triples``."""

    def build(rows):
        torch.manual_seed(0)
        regime = resolve_regime(regime_name, loss=a.loss, reciprocal=True)
        model = resolve_model("complex", graph.num_entities, graph.num_relations, a.dim)
        model = regime.adapt(model, graph.num_relations)
        data = regime.prepare(rows, None, graph.num_entities, graph.num_relations)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        return regime, model, data, opt

    def run(rows):
        regime, model, data, opt = build(rows)
        return train_epochs(
            model, data.items, epochs=1, batch_size=a.batch_size,
            optimizer=opt, generator=torch.Generator().manual_seed(0),
            regime=regime, labels=data.labels,
        )  # fmt: skip

    run(triples[: a.warmup])
    out = timed_epoch(lambda: run(triples))
    out["rows"] = int(build(triples)[2].items.size(0))
    return out


def compare(a) -> dict:
    r"""The three epochs and their ratios."""
    graph = read_triple_folder(a.data)
    train = graph.triples("train")
    gen = torch.Generator().manual_seed(0)
    pick = torch.randperm(train.size(0), generator=gen)[: a.triples]
    triples = train[pick]
    out = {"load_average_start": load_average()}
    out["pykeen_lcwa"] = pykeen_epoch(triples, graph, a)
    out["fedgraph_kvsall"] = fedgraph_epoch(triples, graph, "kvsall", a)
    out["fedgraph_1vsall"] = fedgraph_epoch(triples, graph, "1vsall", a)
    out["load_average_end"] = load_average()
    for name in ("pykeen_lcwa", "fedgraph_kvsall", "fedgraph_1vsall"):
        part = out[name]
        part["ms_per_row"] = 1000 * part["seconds"] / part["rows"]
    pk = out["pykeen_lcwa"]
    out["ratio_epoch_kvsall_over_pykeen"] = (
        out["fedgraph_kvsall"]["seconds"] / pk["seconds"]
    )
    out["ratio_row_1vsall_over_pykeen"] = (
        out["fedgraph_1vsall"]["ms_per_row"] / pk["ms_per_row"]
    )
    out["sizes"] = {
        "num_entities": graph.num_entities,
        "num_relations": graph.num_relations,
        "triples": int(triples.size(0)),
    }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="a KG folder (train/valid/test.txt)")
    p.add_argument("--triples", type=int, default=10000)
    p.add_argument("--warmup", type=int, default=500, help="warm-up triples")
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--loss", choices=("ce", "bce"), default="ce")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    import pykeen

    out = compare(a)
    out["settings"] = {
        **vars(a),
        "out": None if a.out is None else a.out.name,
        "data": Path(a.data).name,
        "model": "complex",
        "optimizer": "Adam(lr=1e-3)",
        "reciprocal": True,
    }
    out["machine"] = {**machine(), "pykeen": pykeen.get_version()}
    text = json.dumps(out, indent=1)
    print(text)
    if a.out is not None:
        atomic_write_json(a.out, out)


if __name__ == "__main__":
    main()
