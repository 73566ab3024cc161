r"""The tables of many KGE models of one kind as one: concatenated entity
and relation tables with each model's Adam state and step count
(:class:`ModelGroup`), the checks that models and optimisers can be grouped
(:func:`check_group`, :func:`adam_settings`); the training loop over a group
is :func:`~fedgraph.training.batched.train_epochs_batched`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torch.optim.adam import adam

from fedgraph.models.kge import KGEModel
from fedgraph.models.samplers import NegativeSampler


def adam_settings(optimizers: Sequence[torch.optim.Optimizer]) -> dict[str, Any]:
    r"""The common ``lr``, ``beta1``, ``beta2``, ``eps`` and ``fused`` of plain Adam
    optimisers (no weight decay, AMSGrad or ``maximize``); a
    :class:`ValueError` when they are not all that with the same values."""
    found = set()
    for opt in optimizers:
        if type(opt) is not torch.optim.Adam or len(opt.param_groups) != 1:
            raise ValueError(
                "batched training needs one plain torch.optim.Adam parameter group "
                f"per model (got {type(opt).__name__})"
            )
        g = opt.param_groups[0]
        if g["weight_decay"] or g["amsgrad"] or g["maximize"]:
            raise ValueError(
                "batched training supports Adam without weight decay, AMSGrad "
                "or `maximize`"
            )
        found.add(
            (
                float(g["lr"]),
                *map(float, g["betas"]),
                float(g["eps"]),
                bool(g.get("fused")),
            )
        )
    if len(found) != 1:
        raise ValueError(
            f"batched training needs one Adam setting for all models (got {found})"
        )
    lr, beta1, beta2, eps, fused = found.pop()
    return {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "fused": fused}


class ModelGroup:
    r"""The tables of ``G`` models of one kind concatenated row-wise, with
    their Adam moments and per-model step counts (read from and written back
    to each model's optimizer by :meth:`write_back`).

    Args:
        models (Sequence[KGEModel]): the models, in the row order wanted.
        optimizers (Sequence[torch.optim.Adam]): each model's Adam over
            its entity and relation tables.
    """

    def __init__(
        self, models: Sequence[KGEModel], optimizers: Sequence[torch.optim.Optimizer]
    ) -> None:
        self.models, self.optimizers = list(models), list(optimizers)
        self.adam = adam_settings(self.optimizers)
        self.params = [
            [m.entity_embedding.weight, m.relation_embedding.weight]
            for m in self.models
        ]
        self.tables, self.moments, self.sizes, self.views = [], [], [], []
        for k in range(2):  # 0: entities, 1: relations
            parts = [p[k] for p in self.params]
            self.sizes.append([p.size(0) for p in parts])
            self.tables.append(torch.cat([p.detach() for p in parts]))
            fresh = not any(self._opt_state(p) for p in parts)
            self.moments.append(
                [
                    torch.zeros_like(self.tables[-1])
                    if fresh
                    else torch.cat([self._state(p, key) for p in parts])
                    for key in ("exp_avg", "exp_avg_sq")
                ]
            )
            # each model's rows, first and second moments: views into the group
            self.views.append(
                [
                    list(x.split(self.sizes[k]))
                    for x in (self.tables[-1], *self.moments[-1])
                ]
            )
        self.ends = [torch.cumsum(torch.tensor(s), 0).tolist() for s in self.sizes]
        self.offsets = [[0, *e[:-1]] for e in self.ends]
        self.steps = [[self._step(p) for p in params] for params in self.params]

    def _opt_state(self, param: Tensor) -> dict:
        for opt in self.optimizers:
            if param in opt.state:
                return opt.state[param]
        return {}

    def _state(self, param: Tensor, key: str) -> Tensor:
        st = self._opt_state(param)
        return st[key].detach().clone() if key in st else torch.zeros_like(param)

    def _step(self, param: Tensor) -> Tensor:
        old = self._opt_state(param).get("step")
        if old is not None:
            return old.detach().clone()
        # torch's convention: on the parameter's device for the fused kernel
        device = param.device if self.adam["fused"] else torch.device("cpu")
        return torch.zeros((), dtype=torch.float32, device=device)

    def leaves(self, start: int, stop: int) -> list[Tensor]:
        r"""Views of the tables' rows of models ``start … stop - 1``, as
        leaves that receive this step's gradients."""
        return [
            t[self.offsets[k][start] : self.ends[k][stop - 1]].detach().requires_grad_()
            for k, t in enumerate(self.tables)
        ]

    @torch.no_grad()
    def adam_step(self, grads: Sequence[Sequence[Tensor]], active: int) -> None:
        r"""One Adam update of the first ``active`` models' rows, given
        ``grads[k][i]`` (table ``k``, model ``i``): PyTorch's
        own (fused, when the models' optimizers are) Adam over the list of
        their row blocks, each with its own step count, as each model's
        optimizer would take it; the other rows, moments and counts are
        left as they are."""
        a = self.adam
        for k, grad in enumerate(grads):
            rows, exp_avg, exp_avg_sq = (x[:active] for x in self.views[k])
            adam(
                rows,
                list(grad),
                exp_avg,
                exp_avg_sq,
                [],
                [s[k] for s in self.steps[:active]],
                foreach=False,
                fused=a["fused"],
                amsgrad=False,
                beta1=a["beta1"],
                beta2=a["beta2"],
                lr=a["lr"],
                weight_decay=0.0,
                eps=a["eps"],
                maximize=False,
            )

    @torch.no_grad()
    def write_back(self) -> None:
        r"""Copies every model's rows, moments and step count back into the
        model and its optimizer (as if it had trained alone)."""
        for i, (params, opt) in enumerate(
            zip(self.params, self.optimizers, strict=True)
        ):
            for k, p in enumerate(params):
                rows, exp_avg, exp_avg_sq = (x[i] for x in self.views[k])
                p.copy_(rows)
                if float(self.steps[i][k]) == 0:
                    continue  # took no step: a fresh optimizer stays fresh
                opt.state[p] = {
                    "step": self.steps[i][k],
                    "exp_avg": exp_avg.clone(),
                    "exp_avg_sq": exp_avg_sq.clone(),
                }


def check_group(
    models: Sequence[KGEModel], samplers: Sequence[NegativeSampler]
) -> None:
    r"""Raises :class:`ValueError` unless the models are of one class with
    the same hyperparameters on one device and every sampler draws shared
    negatives (one ``[K]`` set per batch) of the same ``K``."""

    def hyper(m: KGEModel) -> tuple:
        skip = {"num_entities", "num_relations", "training"}
        plain = (int, float, str, bool)
        return (type(m), m.device) + tuple(
            sorted(
                (k, v)
                for k, v in vars(m).items()
                if k not in skip and isinstance(v, plain)
            )
        )

    kinds = {hyper(m) for m in models}
    if len(kinds) != 1:
        raise ValueError(
            "batched training needs models of one class, hyperparameters and "
            f"device (got {len(kinds)} kinds)"
        )
    if any(not s.shared or s.filtered for s in samplers):
        raise ValueError(
            "batched training needs shared negatives (one [K] draw per batch; "
            "`shared_negatives=True`)"
        )
    if len({s.num_negatives for s in samplers}) != 1:
        raise ValueError("batched training needs one number of negatives")


__all__ = ["ModelGroup", "adam_settings", "check_group"]
