r"""Seconds per evaluation + backward of FedEC's contrastive term on one
client's entity table: :func:`fedgraph.federated.kge.fedec.contrastive_term`
(one pass against the per-round direction, closed-form backward) against the
two :func:`~torch.nn.functional.cosine_similarity` calls it replaced, and
FedProx's per-entity-mean proximal term for scale. Also prints each form's
distance from the float64 value of the gap :math:`s_l - s_g`. Prints JSON::

    python experiments/contrastive_speed/contrastive_speed.py --threads 2 --entities 13452   # R3 client 0
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor


def gap_two_cosines(table: Tensor, pos: Tensor, neg: Tensor) -> Tensor:
    return (
        F.cosine_similarity(table, neg, dim=-1).mean()
        - F.cosine_similarity(table, pos, dim=-1).mean()
    )


def two_cosines(
    table: Tensor, pos: Tensor, neg: Tensor, mu: float, tau: float
) -> Tensor:
    r"""The term as two cosine passes (fedgraph's earlier form, FedLU's code)."""
    return mu * F.softplus(gap_two_cosines(table, pos, neg) / tau)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entities", type=int, default=13452)  # FedLU R3 client 0
    p.add_argument("--dim", type=int, default=256)
    p.add_argument(
        "--drift", type=float, default=1e-3, help="tables' distance, per coordinate"
    )
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)

    from fedgraph.federated.kge.fedec import (
        _MeanCosineGap,
        contrastive_direction,
        contrastive_term,
    )
    from fedgraph.federated.kge.fedprox import proximal_term

    gen = torch.Generator().manual_seed(0)
    w = (0.04 * torch.randn(a.entities, a.dim, generator=gen)).requires_grad_()
    pos = w.detach() + a.drift * torch.randn(a.entities, a.dim, generator=gen)
    neg = w.detach() + a.drift * torch.randn(a.entities, a.dim, generator=gen)
    direction = contrastive_direction(pos, neg)  # once per round in the client
    forms: dict[str, Callable[[], Tensor]] = {
        "two_cosines": lambda: two_cosines(w, pos, neg, 0.3, 0.2),
        "one_pass": lambda: contrastive_term(
            w, None, None, 0.3, 0.2, direction=direction
        ),
        "proximal_entity_mean": lambda: proximal_term(w, pos, 0.1, "entity-mean"),
    }
    out: dict = {
        "settings": vars(a),
        "machine": platform.machine(),
        "load_average": os.getloadavg(),
    }
    for name, f in forms.items():
        for _ in range(3):  # warm-up
            w.grad = None
            f().backward()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            w.grad = None
            f().backward()
        out[f"{name}_ms_per_step"] = 1e3 * (time.perf_counter() - t0) / a.steps
    out["speedup"] = out["two_cosines_ms_per_step"] / out["one_pass_ms_per_step"]
    # the gap s_l - s_g itself (the loss rounds it away at float32 resolution)
    wd = w.detach()
    exact = gap_two_cosines(wd.double(), pos.double(), neg.double()).item()
    out["gap_abs_error_vs_float64"] = {
        "two_cosines": abs(gap_two_cosines(wd, pos, neg).item() - exact),
        "one_pass": abs(_MeanCosineGap.apply(wd, direction).item() - exact),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
