r"""Seconds per training step with per-positive negatives, with and without
the compiled gathered kernel: L1 for TransE
(:func:`fedgraph.models.kge.l1.l1_gathered`), complex modulus for RotatE
(:func:`fedgraph.models.kge.modulus.modulus_gathered`).

One step = ``score_batch`` (positives and ``[B, K]`` negatives) + backward,
alternating head- and tail-batch, on random ids over ``--entities`` entities
(the cost does not depend on which ids). Prints JSON::

    python benchmarks/per_positive_speed.py --threads 1 --entities 5419
    python benchmarks/per_positive_speed.py --model rotate --entities 13078 \
        --batch-size 512 --modes tail-batch --threads 1
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from harness import machine


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("transe", "rotate"), default="transe")
    p.add_argument("--entities", type=int, default=5419)  # FedLU C3 client 1
    p.add_argument("--relations", type=int, default=100)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--modes",
        default="tail-batch,head-batch",
        help="corruption modes, alternated step by step (FedE: tail-batch)",
    )
    a = p.parse_args()
    torch.set_num_threads(a.threads)

    from fedgraph.models.kge import resolve_model

    torch.manual_seed(0)
    model = resolve_model(a.model, a.entities, a.relations, a.dim, gamma=9.0)
    gen = torch.Generator().manual_seed(0)
    b = a.batch_size
    pos = torch.stack(
        [
            torch.randint(a.entities, (b,), generator=gen),
            torch.randint(a.relations, (b,), generator=gen),
            torch.randint(a.entities, (b,), generator=gen),
        ],
        1,
    )
    per_positive = torch.randint(a.entities, (b, a.num_negatives), generator=gen)
    modes = tuple(a.modes.split(","))

    def step(mode: str, neg: torch.Tensor) -> None:
        model.zero_grad(set_to_none=True)
        p_score, n_score = model.score_batch(pos, neg, mode)
        (p_score.sum() - n_score.sum()).backward()

    out: dict = {
        "settings": vars(a),
        "machine": machine(),
    }
    cls = type(model)
    gathers = cls.gathers_negatives
    runs = (
        ("gathered_kernel", gathers, per_positive),
        ("gather_autograd", lambda self: False, per_positive),
        # one [K] set for the batch: the default sampling, for scale
        ("shared_negatives", gathers, per_positive[0]),
    )
    for label, rule, neg in runs:
        cls.gathers_negatives = rule
        for mode in modes:  # warm-up (compilation on first use)
            step(mode, neg)
        t0 = time.perf_counter()
        for i in range(a.steps):
            step(modes[i % len(modes)], neg)
        out[f"{label}_seconds_per_step"] = (time.perf_counter() - t0) / a.steps
    cls.gathers_negatives = gathers
    out["speedup"] = (
        out["gather_autograd_seconds_per_step"]
        / out["gathered_kernel_seconds_per_step"]
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
