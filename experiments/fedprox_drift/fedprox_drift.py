r"""How far FedProx lets a client's entity table move in a round
(FedProx with FedLU's sum over the table trains far slower than FedE).

Takes one client of a federated dataset, FedLU's settings (``fedgraph train``
defaults), and trains its first round step by step from the received table
(the client's initial one) with the proximal term of ``--mu`` /
``--reduction`` added to the loss, as :class:`~fedgraph.federated.KGEClient`
does. At the given steps it prints the norm of the KGE loss's gradient on the
entity table (and per row it touches), the proximal term's (and per row), and
the mean absolute drift of the table from the received one::

    python experiments/fedprox_drift/fedprox_drift.py --data $FEDGRAPH_DATA/fedlu-fb15k-237/R3
    python experiments/fedprox_drift/fedprox_drift.py ... --mu 0        # FedE: no term
"""

from __future__ import annotations

import argparse
import sys

import torch


def main(argv: list[str] | None = None) -> int:
    from fedgraph.federated.kge.fedprox import proximal_term
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.models.kge import MODES
    from fedgraph.runtime.trained import load_kge_federation

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--client", type=int, default=0)
    p.add_argument("--mu", type=float, default=0.1)
    p.add_argument("--reduction", default="sum", help="sum | entity-mean")
    p.add_argument("--steps", type=int, nargs="+", default=[1, 10, 50, 100, 192])
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    fed = load_kge_federation(args.data)
    _, clients = build_kge_federation("fedprox", fed, KGESettings())
    c = clients[args.client]
    model, triples, weights = c.model, c.train_triples, c.weights
    table = model.entity_embedding.weight
    anchor = table.detach().clone()
    opt, gen = c._adam(), c.generator
    perm = torch.randperm(triples.size(0), generator=gen)
    step, last = 0, max(args.steps)
    for start in range(0, triples.size(0), c.batch_size):
        idx = perm[start : start + c.batch_size]
        batch = triples[idx]
        for mode in MODES:
            neg = c.sampler.sample(batch, mode, gen)
            pos, negs = model.score_batch(batch, neg, mode)
            kge = c.loss(pos, negs, weights[idx])
            prox = proximal_term(table, anchor, args.mu, args.reduction)
            step += 1
            if step in args.steps:
                (g_kge,) = torch.autograd.grad(kge, table, retain_graph=True)
                (g_prox,) = torch.autograd.grad(prox, table, retain_graph=True)
                rows = g_kge.abs().sum(1) > 0
                print(
                    f"step {step}: kge grad {g_kge.norm():.2e} on {int(rows.sum())} "
                    f"of {table.size(0)} rows ({g_kge[rows].norm(dim=1).mean():.2e} "
                    f"per row); proximal grad {g_prox.norm():.2e} "
                    f"({g_prox.norm(dim=1).mean():.2e} per row); mean |drift| "
                    f"{(table - anchor).abs().mean():.2e}",
                    flush=True,
                )
            opt.zero_grad(set_to_none=True)
            (kge + prox).backward()
            opt.step()
            if step >= last:
                return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
