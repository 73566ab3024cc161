r"""Seconds per TransE training step with per-positive negatives, with and
without the compiled gathered L1 kernel (:func:`fedgraph.models.kge.l1.l1_gathered`).

One step = ``score_batch`` (positives and ``[B, K]`` negatives) + backward,
alternating head- and tail-batch, on random ids over ``--entities`` entities
(the cost does not depend on which ids). Prints JSON::

    python benchmarks/per_positive_speed.py --threads 1 --entities 5419
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entities", type=int, default=5419)  # FedLU C3 client 1
    p.add_argument("--relations", type=int, default=100)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)

    import fedgraph.models.kge.transe as transe_mod
    from fedgraph.models import TransE

    torch.manual_seed(0)
    model = TransE(a.entities, a.relations, a.dim, gamma=9.0)
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
    neg = torch.randint(a.entities, (b, a.num_negatives), generator=gen)
    modes = ("tail-batch", "head-batch")

    def step(mode: str) -> None:
        model.zero_grad(set_to_none=True)
        p_score, n_score = model.score_batch(pos, neg, mode)
        (p_score.sum() - n_score.sum()).backward()

    out: dict = {
        "settings": vars(a),
        "machine": platform.machine(),
        "load_average": __import__("os").getloadavg(),
    }
    enabled = transe_mod.compile_enabled
    for label, on in (("gathered_kernel", True), ("gather_autograd", False)):
        transe_mod.compile_enabled = enabled if on else (lambda: False)
        for mode in modes:  # warm-up (compilation on first use)
            step(mode)
        t0 = time.perf_counter()
        for i in range(a.steps):
            step(modes[i % 2])
        out[f"{label}_seconds_per_step"] = (time.perf_counter() - t0) / a.steps
    transe_mod.compile_enabled = enabled
    out["speedup"] = (
        out["gather_autograd_seconds_per_step"]
        / out["gathered_kernel_seconds_per_step"]
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
