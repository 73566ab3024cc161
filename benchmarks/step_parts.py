r"""Where one KGE training step's time goes as the entity table grows.

A step of :func:`fedgraph.training.kge_trainer.train_steps` draws negatives,
scores (``forward``), frees the previous gradients (``zero_grad``,
``set_to_none=True``), back-propagates (``backward``) and takes torch's fused
Adam step (``adam``). The scoring of a batch does not depend on the number of
entities; the gradient of the entity table is dense (one ``index_select``
per step) and Adam updates every row, so ``backward``, ``zero_grad`` and
``adam`` grow with the table. This script times the four parts on random
triples for each ``--entities`` count, the rest fixed (FedE's settings by
default: dim 256, batch 512, 256 negatives shared by the batch, tails
corrupted, self-adversarial loss), and prints or writes JSON with the median
milliseconds of each part over ``--steps`` steps after ``--warmup`` (the
compiled scoring kernels compile during the warm-up)::

    python benchmarks/step_parts.py --model transe --entities 14541,75492 \
        --relations 237,200 --threads 2 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from harness import machine

from fedgraph.models import UniformNegativeSampler, resolve_model
from fedgraph.models.losses import NSSALoss

PARTS = ("sample", "forward", "zero_grad", "backward", "adam")


def _counts(p: argparse.ArgumentParser, text: str, flag: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) <= 0:
        p.error(f"{flag} {text!r}: expected comma-separated positive integers")
    return values


def time_parts(
    model_name: str, num_entities: int, num_relations: int, a: argparse.Namespace
) -> dict[str, float]:
    r"""Median milliseconds of each of :data:`PARTS` over ``a.steps`` steps."""
    torch.manual_seed(0)
    model = resolve_model(model_name, num_entities, num_relations, a.dim, gamma=a.gamma)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    loss = NSSALoss(1.0)
    sampler = UniformNegativeSampler(
        num_entities, a.num_negatives, shared=not a.per_positive
    )
    gen = torch.Generator().manual_seed(0)
    size = (a.batch_size,)
    batch = torch.stack(
        [
            torch.randint(num_entities, size, generator=gen),
            torch.randint(num_relations, size, generator=gen),
            torch.randint(num_entities, size, generator=gen),
        ],
        dim=1,
    )
    times: dict[str, list[float]] = {p: [] for p in PARTS}
    for i in range(a.warmup + a.steps):
        t = [time.perf_counter()]
        neg = sampler.sample(batch, "tail-batch", gen)
        t.append(time.perf_counter())
        value = loss(*model.score_batch(batch, neg, "tail-batch"))
        t.append(time.perf_counter())
        opt.zero_grad(set_to_none=True)
        t.append(time.perf_counter())
        value.backward()
        t.append(time.perf_counter())
        opt.step()
        t.append(time.perf_counter())
        if i >= a.warmup:
            for k, part in enumerate(PARTS):
                times[part].append(1000 * (t[k + 1] - t[k]))
    out = {p: round(statistics.median(v), 2) for p, v in times.items()}
    out["total"] = round(sum(out[p] for p in PARTS), 2)
    out["parameters"] = sum(p.numel() for p in model.parameters())
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="transe", help="KGE model (default: transe)")
    p.add_argument("--entities", default="14541,75492", help="comma list")
    p.add_argument(
        "--relations", default="237,200", help="comma list, one per --entities"
    )
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--gamma", type=float, default=10.0)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument(
        "--per-positive",
        action="store_true",
        help="K negatives per positive instead of K shared by the batch",
    )
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", default=None, help="write the JSON here too")
    a = p.parse_args(argv)
    entities = _counts(p, a.entities, "--entities")
    relations = _counts(p, a.relations, "--relations")
    if len(relations) != len(entities):
        p.error(f"--relations has {len(relations)} counts, --entities {len(entities)}")
    if a.steps <= 0 or a.warmup < 0:
        p.error(
            f"--steps must be positive and --warmup >= 0 (got {a.steps}, {a.warmup})"
        )
    torch.set_num_threads(a.threads)
    doc = {
        "model": a.model,
        "results": {
            str(n): time_parts(a.model, n, r, a)
            for n, r in zip(entities, relations, strict=True)
        },
        "settings": {k: v for k, v in vars(a).items() if k != "json"},
        "machine": machine(),
    }
    text = json.dumps(doc, indent=2)
    print(text)
    if a.json:
        target = Path(a.json)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text + "\n")
        os.replace(tmp, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
