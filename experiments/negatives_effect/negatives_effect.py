r"""Accuracy effect of the negative-sampling regime on one client of a
federated KG (FedLU's C3 Independent reproduction deviates by +1.4 MRR points).

Trains the client's Independent TransE model (``fedgraph.runtime.baselines``
settings: dim 256, γ = 9, Adam 1e-4, batch 1024, 256 negatives, validation
every 5 epochs, patience 3; the model seeded as that client of the
Independent run) under each ``--regimes``:

* ``shared``: fedgraph's default, 256 negatives per batch, redrawn each step
  (the same run as the client's part of the Independent reproduction);
* ``per-positive``: 256 negatives per positive, redrawn each step;
* ``frozen``: FedLU's code — 256 negatives per positive and corruption mode
  drawn once at start-up and replayed every epoch, with the batch order
  fixed at start-up (a bug not to copy; measured here to explain a gap);
* ``frozen-shared``: the same freezing with shared negatives — batch order
  fixed at start-up and each batch's 256 negatives per mode drawn once —
  which isolates the effect of freezing at the speed of ``shared``
  (per-positive negatives are ~25× slower per step here).

Prints JSON: per regime the best epoch, epochs run, best validation and test
metrics (filtered, head + tail, the client's entities as candidates) and
training seconds. Each regime checkpoints under ``--out`` and resumes::

    python experiments/negatives_effect/negatives_effect.py --data $FEDGRAPH_DATA/fedlu-fb15k-237/C3 \
        --client 1 --threads 1 --out runs/negatives-c3-client1 \
        > docs/results/fedlu-c3-client1-negatives-transe.json

``--batch-size``, ``--max-epochs``, ``--eval-every`` and ``--patience`` set the
schedule (FedLU's Independent script, ``run_local.sh``: 512, 200, 10, 3; use a
separate ``--out``: checkpoints are named by regime only).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch
from torch import Tensor

from fedgraph.models.kge import MODES, resolve_model
from fedgraph.models.samplers import UniformNegativeSampler, triple_keys
from fedgraph.runtime.trained import load_kge_federation
from fedgraph.training.kge_trainer import KGETrainer

REGIMES = ("shared", "per-positive", "frozen", "frozen-shared")


class FrozenNegatives(UniformNegativeSampler):
    r"""Negatives drawn once (seeded) and replayed: FedLU's code.

    Per positive (``batch_size=None``): ``K`` ids per training triple and
    mode, returned for that triple whenever it is sampled. Shared
    (``batch_size`` set, batch order fixed): ``K`` ids per batch and mode,
    the batch known by its first triple."""

    def __init__(
        self,
        triples: Tensor,
        num_entities: int,
        num_negatives: int,
        seed: int,
        batch_size: int | None = None,
    ) -> None:
        super().__init__(num_entities, num_negatives, shared=batch_size is not None)
        self.num_relations = int(triples[:, 1].max()) + 1
        anchors = triples if batch_size is None else triples[::batch_size]
        keys = triple_keys(anchors, num_entities, self.num_relations)
        self.keys, self.order = torch.sort(keys)
        if bool((self.keys[1:] == self.keys[:-1]).any()):
            raise ValueError("the training triples hold duplicates")
        gen = torch.Generator().manual_seed(seed)
        self.table = {
            m: torch.randint(
                num_entities, (anchors.size(0), num_negatives), generator=gen
            )
            for m in MODES
        }

    def sample(self, positive, mode="tail-batch", generator=None):  # noqa: ANN001, ANN201
        anchors = positive[:1] if self.shared else positive
        keys = triple_keys(anchors, self.num_entities, self.num_relations)
        pos = torch.searchsorted(self.keys, keys)
        if not bool((self.keys[pos.clamp_max(self.keys.numel() - 1)] == keys).all()):
            raise KeyError("a sampled batch is not where the frozen order says")
        rows = self.table[mode][self.order[pos]]
        return rows[0] if self.shared else rows


def run_regime(graph, client: int, regime: str, out: Path, a) -> dict:  # noqa: ANN001
    torch.manual_seed(a.seed + client)  # as runtime.baselines seeds client i
    model = resolve_model(
        "transe", graph.num_entities, graph.num_relations, a.dim, gamma=a.gamma
    )
    trainer = KGETrainer(
        model,
        graph,
        lr=a.lr,
        batch_size=a.batch_size,
        num_negatives=a.num_negatives,
        shared_negatives=regime in ("shared", "frozen-shared"),
        max_epochs=a.max_epochs,
        eval_every=a.eval_every,
        patience=a.patience,
        seed=a.seed,
        checkpoint=out / f"{regime}.pt",
        log=f"{regime}",
        shuffle=not regime.startswith("frozen"),
    )
    if regime.startswith("frozen"):
        gen = torch.Generator().manual_seed(a.seed + 1)
        perm = torch.randperm(trainer.train_triples.size(0), generator=gen)
        trainer.train_triples = trainer.train_triples[perm]
        if trainer.weights is not None:
            trainer.weights = trainer.weights[perm]
        trainer.sampler = FrozenNegatives(
            trainer.train_triples,
            graph.num_entities,
            a.num_negatives,
            a.seed + 2,
            batch_size=a.batch_size if regime == "frozen-shared" else None,
        )
    t0 = time.perf_counter()
    info = trainer.fit()
    test = trainer.evaluate("test").compute()
    return {
        "regime": regime,
        "best_epoch": info["best_epoch"],
        "epochs": info["epochs"],
        "best_valid_mrr": trainer.best_mrr,
        "test": test,
        "train_seconds": trainer.train_seconds,
        "wall_seconds_this_call": time.perf_counter() - t0,
        "valid_curve": [(h["epoch"], h["valid"]["mrr"]) for h in info["history"]],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="federated KG folder or name")
    p.add_argument("--client", type=int, default=1)
    p.add_argument("--regimes", default=",".join(REGIMES))
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--gamma", type=float, default=9.0)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument("--max-epochs", type=int, default=400)
    p.add_argument("--eval-every", type=int, default=5, help="epochs per validation")
    p.add_argument("--patience", type=int, default=3, help="validations")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True, help="checkpoint folder")
    a = p.parse_args()
    regimes = [r.strip() for r in a.regimes.split(",") if r.strip()]
    bad = [r for r in regimes if r not in REGIMES]
    if bad:
        p.error(f"--regimes: unknown {bad} (choices: {list(REGIMES)})")
    torch.set_num_threads(a.threads)
    fed = load_kge_federation(a.data)
    if not 0 <= a.client < fed.num_clients:
        p.error(f"--client must lie in [0, {fed.num_clients}) (got {a.client})")
    graph = fed.shards[a.client].graph
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = [run_regime(graph, a.client, r, out, a) for r in regimes]
    print(
        json.dumps(
            {
                "data": str(a.data),
                "client": a.client,
                "train_triples": graph.num_triples("train"),
                "test_triples": graph.num_triples("test"),
                "settings": {
                    k: getattr(a, k)
                    for k in (
                        "dim",
                        "gamma",
                        "lr",
                        "batch_size",
                        "num_negatives",
                        "max_epochs",
                        "eval_every",
                        "patience",
                        "seed",
                        "threads",
                    )
                },  # fmt: skip
                "machine": platform.machine(),
                "results": results,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
