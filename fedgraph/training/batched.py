r"""Training many KGE models at once: the local epochs of many federated
clients as one vectorised computation (:func:`train_epochs_batched`).

Every model keeps its own tables, Adam state, sampler and generator, and
takes exactly the steps :func:`~fedgraph.training.kge_trainer.train_epochs`
would take on its own (same batches, same negatives, same order); only the
arithmetic is shared. The models' entity tables are concatenated row-wise
into one tensor, their relation tables into another; at step ``b`` every
model that has a ``b``-th batch contributes its batch and its shared
negatives. Models on batches of similar width are scored together
(:meth:`~fedgraph.models.kge.KGEModel.score_tails_grouped`; positives padded
to the bucket's widest batch, pads weighted 0, :func:`buckets`), in chunks of
``chunk_size`` models per backward pass; the loss is the sum of the
per-model weighted means, and one Adam update (torch's own, over the list of
the stepping models' row blocks) ends the step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from fedgraph.models.kge import MODES, TAIL_BATCH, KGEModel
from fedgraph.models.losses import KGELoss
from fedgraph.models.samplers import NegativeSampler
from fedgraph.progress import advance
from fedgraph.training.model_group import ModelGroup, adam_settings, check_group


class _Batches:
    r"""The models' triples in the group's entity/relation id space, and the
    padded per-epoch batch index of every model."""

    def __init__(
        self,
        group: ModelGroup,
        triples: Sequence[Tensor],
        weights: Sequence[Tensor | None],
        batch_size: int,
    ) -> None:
        self.local = list(triples)
        self.sizes = [t.size(0) for t in self.local]
        self.batch_size = batch_size
        self.num_batches = [math.ceil(n / batch_size) for n in self.sizes]
        ent, rel = (torch.tensor(o)[:, None] for o in group.offsets)
        shifted = []
        for i, t in enumerate(self.local):
            shift = torch.stack([ent[i], rel[i], ent[i]], dim=1)
            shifted.append(t.long() + shift)
        self.triples = torch.cat(shifted)
        dtype = group.tables[0].dtype
        self.weights = torch.cat(
            [
                torch.ones(n, dtype=dtype) if w is None else w.to(dtype)
                for n, w in zip(self.sizes, weights, strict=True)
            ]
        )
        self.starts = [0, *torch.cumsum(torch.tensor(self.sizes), 0).tolist()[:-1]]
        self.ent_offsets, self.rel_offsets = ent.view(-1), rel.view(-1)

    def active(self, b: int) -> int:
        r"""How many models (a prefix: they are sorted by batch count) have
        a ``b``-th batch."""
        return sum(1 for nb in self.num_batches if nb > b)

    def epoch(self, perms: Sequence[Tensor]) -> tuple[Tensor, Tensor]:
        r"""``[G, W]`` rows into :attr:`triples` of the epoch's batches
        (batch ``b`` of model ``g`` at columns ``b·B …``) and ``[G, W]``
        weights (0 on the pads), ``W`` = the longest model's batches."""
        width = max(self.num_batches) * self.batch_size
        index = torch.zeros(len(perms), width, dtype=torch.long)
        weight = torch.zeros(len(perms), width, dtype=self.weights.dtype)
        for g, perm in enumerate(perms):
            rows = perm + self.starts[g]
            index[g, : rows.numel()] = rows
            index[g, rows.numel() :] = self.starts[g]  # pads: a row of the model
            weight[g, : rows.numel()] = self.weights[rows]
        return index, weight


def _bucket_loss(
    scorer: KGEModel,
    head: Tensor,
    rel: Tensor,
    tail: Tensor,
    cand: Tensor,
    weight: Tensor,
    mode: str,
    loss: KGELoss,
) -> Tensor:
    r"""``[G]`` weighted mean losses of ``G`` models' batches: ``head``,
    ``rel``, ``tail`` ``[G, W, d]``, ``cand`` ``[G, K, d]`` (each model's
    shared negatives), ``weight`` ``[G, W]`` (0 on pads)."""
    g, w = weight.shape
    pos = scorer.interaction(head, rel, tail)
    if mode == TAIL_BATCH:
        neg = scorer.score_tails_grouped(head, rel, cand)
    else:
        neg = scorer.score_heads_grouped(rel, tail, cand)
    rows = loss.rows(pos.reshape(-1), neg.reshape(g * w, -1)).view(g, w)
    return (weight * rows).sum(1) / weight.sum(1)


def _step_loss(
    scorer: KGEModel,
    leaves: Sequence[Tensor],
    parts: Sequence[tuple[Tensor, Tensor]],
    negatives: Tensor,
    mode: str,
    loss: KGELoss,
) -> Tensor:
    r"""``[A]`` per-model weighted mean losses of one step, in the order of
    ``parts`` (buckets of ``[G, W, 3]`` batches in the group's id space
    with their ``[G, W]`` weights) and of ``negatives`` (``[A, K]``). Each
    table is gathered once, so it gets one dense gradient per step."""
    heads = [b[..., 0].reshape(-1) for b, _ in parts]
    tails = [b[..., 2].reshape(-1) for b, _ in parts]
    sizes = [h.numel() for h in heads]
    ent = leaves[0].index_select(0, torch.cat([*heads, *tails, negatives.reshape(-1)]))
    rel = leaves[1].index_select(
        0, torch.cat([b[..., 1].reshape(-1) for b, _ in parts])
    )
    # split (not slices): its backward is one concatenation of the pieces'
    # gradients, where every slice would scatter into a zero tensor of the whole
    pieces = ent.split([*sizes, *sizes, negatives.numel()])
    counts = [w.size(0) for _, w in parts]
    cands = pieces[-1].view(*negatives.shape, -1).split(counts)
    out = []
    for j, (rel_j, (_, weight)) in enumerate(zip(rel.split(sizes), parts, strict=True)):
        shape = (*weight.shape, -1)
        head, tail = pieces[j].view(shape), pieces[len(parts) + j].view(shape)
        out.append(
            _bucket_loss(
                scorer, head, rel_j.view(shape), tail, cands[j], weight, mode, loss
            )
        )
    return torch.cat(out)


def train_epochs_batched(
    models: Sequence[KGEModel],
    triples: Sequence[Tensor],
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    loss: KGELoss,
    optimizers: Sequence[torch.optim.Optimizer],
    samplers: Sequence[NegativeSampler],
    generators: Sequence[torch.Generator],
    modes: Sequence[str] = MODES,
    weights: Sequence[Tensor | None] | None = None,
    shuffle: bool = True,
    chunk_size: int | None = None,
) -> list[float]:
    r"""Trains every ``models[i]`` on ``triples[i]`` as
    :func:`~fedgraph.training.kge_trainer.train_epochs` would, all at once,
    and returns each model's mean loss.

    Model :math:`i` takes the same :math:`e \cdot \lceil n_i / B \rceil
    \cdot |\text{modes}|` Adam steps, on the same batches and negatives
    (drawn from ``generators[i]`` in the same order), as it would alone, so
    the result equals sequential training up to float rounding. A model
    with fewer batches than another simply takes no part in the later steps
    of an epoch: its rows, Adam moments and step count stay as they are
    (a masked Adam step,
    :meth:`~fedgraph.training.model_group.ModelGroup.adam_step`), while the others
    go on; each model keeps its own step count and bias correction. The
    optimizers' states are read at the start and written back at the end
    (a fresh Adam starts at step 0).

    Needs models of one class and hyperparameters, plain Adam with one
    setting, shared negatives, and a loss with per-row values
    (:meth:`~fedgraph.models.losses.KGELoss.rows`); regularisers
    (``extra_loss``) are not supported.

    Args:
        models (Sequence[KGEModel]): the models (trained in place).
        triples (Sequence[Tensor]): each model's ``[n_i, 3]`` training
            triples (CPU).
        epochs (int, optional): passes over each model's triples. (default: 1)
        batch_size (int, optional): positives per step and model.
        loss (fedgraph.models.KGELoss): the loss (the same for all models).
        optimizers (Sequence[torch.optim.Adam]): each model's Adam.
        samplers (Sequence[NegativeSampler]): each model's shared sampler.
        generators (Sequence[torch.Generator]): each model's generator.
        modes (Sequence[str], optional): corruption modes per batch.
        weights (Sequence[Tensor], optional): each model's ``[n_i]``
            per-triple weights (or :obj:`None` entries).
        shuffle (bool, optional): reshuffle each model's triples every epoch.
        chunk_size (int, optional): models scored and back-propagated
            together; a step runs its models in chunks of this many, so
            the intermediates of a chunk can stay in a CPU's cache (the
            result is the same). (default: :obj:`None`, all at once)
    """
    g = len(models)
    check_group(models, samplers)
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"`chunk_size` must be positive (got {chunk_size})")
    chunk = g if chunk_size is None else int(chunk_size)
    nb = [math.ceil(t.size(0) / batch_size) for t in triples]
    order = sorted(range(g), key=lambda i: -nb[i])  # active models: a prefix
    group = ModelGroup([models[i] for i in order], [optimizers[i] for i in order])
    weights = [None] * g if weights is None else list(weights)
    data = _Batches(
        group, [triples[i] for i in order], [weights[i] for i in order], batch_size
    )
    for m in models:
        m.train()
    totals = torch.zeros(g, dtype=torch.float64, device=group.tables[0].device)
    for _ in range(int(epochs)):
        perms = [
            torch.randperm(data.sizes[j], generator=generators[i])
            if shuffle
            else torch.arange(data.sizes[j])
            for j, i in enumerate(order)
        ]
        _run_epoch(
            group, data, perms, order, loss, samplers, generators, modes, totals, chunk
        )
    group.write_back()
    steps = [int(epochs) * nb[i] * len(modes) for i in range(g)]
    return [float(totals[i]) / max(1, steps[i]) for i in range(g)]


def buckets(widths: Sequence[int], slack: float = 0.2) -> list[list[int]]:
    r"""Groups positions by batch width so that padding each group to its
    widest costs at most ``slack`` of the real rows (the models on a full
    batch form one group; those on their last, shorter batch a few more).
    ``widths`` must be non-increasing; each group is a run of positions."""
    out: list[list[int]] = []
    for j, w in enumerate(widths):
        if out:
            first, total = widths[out[-1][0]], sum(widths[i] for i in out[-1])
            if first * (len(out[-1]) + 1) <= (1 + slack) * (total + w):
                out[-1].append(j)
                continue
        out.append([j])
    return out


def _plan(
    data: _Batches,
    index: Tensor,
    weight: Tensor,
    widths: Sequence[int],
    lo: int,
    span: tuple[int, int],
    device: torch.device,
) -> tuple[list[tuple[Tensor, Tensor]], Tensor]:
    r"""The width buckets of models ``span`` at batch offset ``lo``: their
    ``[G, W, 3]`` batches (ids relative to the span's first rows) and
    ``[G, W]`` weights, and the models in bucket order."""
    p0, p1 = span
    # shorter last batches together
    by_width = sorted(range(p0, p1), key=lambda j: -widths[j])
    e0, r0 = int(data.ent_offsets[p0]), int(data.rel_offsets[p0])
    shift = torch.tensor([e0, r0, e0])
    parts = []
    for run in buckets([widths[j] for j in by_width]):
        sel = torch.tensor([by_width[i] for i in run])
        width = widths[by_width[run[0]]]
        rows = index[sel, lo : lo + width]
        parts.append(
            (
                (data.triples[rows] - shift).to(device),
                weight[sel, lo : lo + width].to(device),
            )
        )
    return parts, torch.tensor(by_width)


def _run_epoch(
    group: ModelGroup,
    data: _Batches,
    perms: Sequence[Tensor],
    order: Sequence[int],
    loss: KGELoss,
    samplers: Sequence[NegativeSampler],
    generators: Sequence[torch.Generator],
    modes: Sequence[str],
    totals: Tensor,
    chunk: int,
) -> None:
    r"""One epoch of every model (see :func:`train_epochs_batched`);
    adds each model's step losses to ``totals`` (original order)."""
    index, weight = data.epoch(perms)
    device, bsz = group.tables[0].device, data.batch_size
    positions = torch.tensor(list(order), device=device)  # group row -> model
    for b in range(max(data.num_batches)):
        a, lo = data.active(b), b * bsz
        widths = [min(bsz, data.sizes[j] - lo) for j in range(a)]
        spans = [(p, min(a, p + chunk)) for p in range(0, a, chunk)]
        plans = [_plan(data, index, weight, widths, lo, sp, device) for sp in spans]
        local = [data.local[j][perms[j][lo : lo + bsz]] for j in range(a)]
        for mode in modes:
            neg = torch.stack(
                [
                    samplers[order[j]].sample(local[j], mode, generators[order[j]])
                    for j in range(a)
                ]
            )
            grads: list[list[Tensor]] = [[], []]
            for (p0, p1), (parts, ids) in zip(spans, plans, strict=True):
                leaves = group.leaves(p0, p1)
                off = data.ent_offsets[p0:p1] - data.ent_offsets[p0]
                span_neg = (neg[p0:p1] + off[:, None])[ids - p0].to(device)
                values = _step_loss(
                    group.models[0], leaves, parts, span_neg, mode, loss
                )
                values.sum().backward()
                for k, leaf in enumerate(leaves):
                    grads[k] += leaf.grad.split(group.sizes[k][p0:p1])
                totals.index_add_(
                    0, positions[ids.to(device)], values.detach().double()
                )
            group.adam_step(grads, a)
        advance(a)


__all__ = [
    "train_epochs_batched",
    "buckets",
    "ModelGroup",
    "adam_settings",
    "check_group",
]
