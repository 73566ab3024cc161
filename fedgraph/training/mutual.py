r"""The local/global training steps of `FedLU <https://arxiv.org/abs/2302.02069>`_:
mutual knowledge distillation (§4.1, Eq. 11) and retroactive interference
(§4.2, Eq. 14) between a client's local and global entity tables.

Both models share the client's relation table (FedLU Eqs. 5–6 score the
global entities with :math:`\mathbf{R}^{\text{local}}`); only the entity
tables are distilled.
"""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.kge import MODES, KGEModel
from fedgraph.models.losses import KGELoss
from fedgraph.models.samplers import NegativeSampler
from fedgraph.training.distill import distillation_loss
from fedgraph.training.interference import interference_loss
from fedgraph.training.sample_on import check_sample_on, epoch_batches


def _scores(
    model: KGEModel, batch: Tensor, neg: Tensor, mode: str
) -> tuple[Tensor, Tensor]:
    # `batch` and `neg` on the models' device (moved once per step by the
    # loops: both models score the same tensors up to four times)
    pos = model.score_hrt(batch[:, 0], batch[:, 1], batch[:, 2])
    return pos, model.score_negatives(batch, neg, mode)


def _step(opt: torch.optim.Optimizer, value: Tensor) -> Tensor:
    # the loss as a float64 device scalar (summed without a host sync)
    opt.zero_grad(set_to_none=True)
    value.backward()
    opt.step()
    return value.detach().double()


def _zero(model: KGEModel) -> Tensor:
    return torch.zeros((), dtype=torch.float64, device=model.device)


def mutual_epochs(
    local: KGEModel,
    glob: KGEModel,
    triples: Tensor,
    *,
    epochs: int,
    batch_size: int,
    loss: KGELoss,
    local_optimizer: torch.optim.Optimizer,
    global_optimizer: torch.optim.Optimizer,
    sampler: NegativeSampler,
    generator: torch.Generator,
    mu_distill: float = 2.0,
    weights: Tensor | None = None,
    modes: tuple[str, ...] = MODES,
    mu_global: float | None = None,
    sample_on: str = "host",
) -> tuple[float, float]:
    r"""FedLU learning (Algorithm 1, lines 6–7) and passive decay: for each
    batch and corruption mode, one step of the local model on

    .. math::
        \mathcal{L}^{\text{local}} = \mathcal{L}^{\text{predict}}
        + \mu_{\text{distill}}\, \mathrm{KL}(\mathcal{P}^{\text{global}}
        \,\|\, \mathcal{P}^{\text{local}})  \qquad \text{(Eq. 11)}

    then one step of the global model with the roles swapped (the teacher is
    detached each time); both see the same negatives. ``mu_distill`` weighs
    the local model's distillation (teacher: global) and ``mu_global`` the
    global model's (teacher: local; ``None``: the same as ``mu_distill``). A
    zero weight skips that direction's teacher scores altogether. Batches
    and negatives are drawn as in
    :func:`~fedgraph.training.kge_trainer.train_epochs` (``sample_on``:
    ``"host"`` or ``"device"``, :mod:`fedgraph.training.sample_on`).

    Returns:
        tuple[float, float]: the mean local and global losses.
    """
    mu_local = float(mu_distill)
    mu_glob = mu_local if mu_global is None else float(mu_global)
    total_l, total_g = _zero(local), _zero(local)
    steps = 0
    check_sample_on(sample_on)
    # on the device the filtered redraw must not read its count back
    options = {"sync_free": True} if sample_on == "device" else {}
    for _ in range(int(epochs)):
        for drawn, batch, w in epoch_batches(
            triples,
            weights,
            batch_size=batch_size,
            generator=generator,
            device=local.device,
            sample_on=sample_on,
        ):
            for mode in modes:
                neg = sampler.sample(drawn, mode, generator, **options)
                neg = neg.to(local.device)
                l_pos, l_neg = _scores(local, batch, neg, mode)
                value = loss(l_pos, l_neg, w)
                if mu_local:
                    with torch.no_grad():
                        g_pos, g_neg = _scores(glob, batch, neg, mode)
                    value = value + mu_local * distillation_loss(
                        l_pos, l_neg, g_pos, g_neg
                    )
                total_l += _step(local_optimizer, value)
                g_pos, g_neg = _scores(glob, batch, neg, mode)
                value = loss(g_pos, g_neg, w)
                if mu_glob:
                    with torch.no_grad():
                        l_pos, l_neg = _scores(local, batch, neg, mode)
                    value = value + mu_glob * distillation_loss(
                        g_pos, g_neg, l_pos, l_neg
                    )
                total_g += _step(global_optimizer, value)
                steps += 1
    return float(total_l) / max(1, steps), float(total_g) / max(1, steps)


def interference_epochs(
    local: KGEModel,
    glob: KGEModel,
    forget: Tensor,
    *,
    epochs: int,
    batch_size: int,
    local_optimizer: torch.optim.Optimizer,
    global_optimizer: torch.optim.Optimizer,
    sampler: NegativeSampler,
    generator: torch.Generator,
    mu_soft: float = 0.1,
    mu_distill: float = 2.0,
    hard: bool = True,
    modes: tuple[str, ...] = MODES,
) -> tuple[float, float]:
    r"""Retroactive interference (FedLU §4.2, Eq. 14) on the forgetting set:
    for each batch and mode, one step of the local model on
    :math:`\mathcal{L}^{\text{hard}} + \mu_{\text{soft}}\mathcal{L}^{\text{soft}}
    + \mu_{\text{distill}}\mathcal{L}^{\text{distill}}` (teacher: global), then
    one of the global model with the distillation reversed.

    Returns:
        tuple[float, float]: the mean local and global losses.
    """
    total_l, total_g = _zero(local), _zero(local)
    steps = 0
    n = forget.size(0)
    kw = {"mu_soft": mu_soft, "mu_distill": mu_distill, "hard": hard}
    for _ in range(int(epochs)):
        perm = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            cpu_batch = forget[perm[start : start + batch_size]]
            batch = cpu_batch.to(local.device)
            for mode in modes:
                neg = sampler.sample(cpu_batch, mode, generator).to(local.device)
                with torch.no_grad():
                    g_pos, g_neg = _scores(glob, batch, neg, mode)
                l_pos, l_neg = _scores(local, batch, neg, mode)
                total_l += _step(
                    local_optimizer, interference_loss(l_pos, l_neg, g_pos, g_neg, **kw)
                )
                with torch.no_grad():
                    l_pos, l_neg = _scores(local, batch, neg, mode)
                g_pos, g_neg = _scores(glob, batch, neg, mode)
                total_g += _step(
                    global_optimizer,
                    interference_loss(g_pos, g_neg, l_pos, l_neg, **kw),
                )
                steps += 1
    return float(total_l) / max(1, steps), float(total_g) / max(1, steps)


__all__ = ["mutual_epochs", "interference_epochs"]
