r"""FedE's model fusion (FedE §2.2.3) as a final step: fitting the
:class:`~fedgraph.models.fusion.ScoreFusion` layer of each client and
ranking the fused, single and federated models (the Flower messages:
:mod:`fedgraph.runtime.flower.fusion`; the single models' files:
:mod:`fedgraph.training.fusion_io`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from fedgraph.eval.metrics import LinkPredState
from fedgraph.models.fusion import ScoreFusion
from fedgraph.models.kge import MODES, TAIL_BATCH, KGEModel
from fedgraph.models.losses import MarginRankingLoss
from fedgraph.models.samplers import UniformNegativeSampler
from fedgraph.progress import advance, describe

#: the most bytes :func:`fit_fusion` spends on score tables (above: scores
#: each batch's negatives through the two models instead).
SCORE_TABLE_BYTES = 4 << 30


def _score_tables(
    fusion: ScoreFusion, triples: Tensor, modes: Sequence[str], chunk: int = 1024
) -> dict[str, Tensor] | None:
    r"""``{mode: [n, E, 2]}``: both frozen models' scores of every corruption
    of every triple (tail mode: ``(h, r, e)``; head mode: ``(e, r, t)``), or
    :obj:`None` when they would exceed :data:`SCORE_TABLE_BYTES`. The layer
    being all that trains, a step then only gathers its scores."""
    n, e = triples.size(0), fusion.num_entities
    if n * e * 2 * 4 * len(modes) > SCORE_TABLE_BYTES:
        return None
    tables = {}
    with torch.no_grad():
        for mode in modes:
            parts = []
            for rows in triples.split(chunk):
                h, r, t = rows.unbind(1)
                pair = [
                    m.score_t(h, r) if mode == TAIL_BATCH else m.score_h(r, t)
                    for m in (fusion.single, fusion.federated)
                ]
                parts.append(torch.stack(pair, -1))
                advance(rows.size(0))  # the open progress bar: queries scored
            tables[mode] = torch.cat(parts)
    return tables


def _step_scores(
    fusion: ScoreFusion,
    tables: dict[str, Tensor] | None,
    rows: Tensor,
    batch: Tensor,
    neg: Tensor,
    mode: str,
) -> tuple[Tensor, Tensor]:
    r"""The fused ``[B]`` positive and ``[B, K]`` negative scores of a step,
    gathered from ``tables`` (rows ``rows`` of the fitted triples) or scored
    through the two models."""
    if tables is None:
        pos = fusion.score_hrt(batch[:, 0], batch[:, 1], batch[:, 2])
        return pos, fusion.score_negatives(batch, neg, mode)
    # gathered straight from the table: no [B, E, 2] copy of the batch's rows
    table = tables[mode]
    target = batch[:, 2] if mode == TAIL_BATCH else batch[:, 0]
    pos = fusion.linear(table[rows, target]).squeeze(-1)
    return pos, fusion.linear(table[rows[:, None], neg]).squeeze(-1)


def fit_fusion(
    fusion: ScoreFusion,
    triples: Tensor,
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    num_negatives: int = 16,
    margin: float = 10.0,
    lr: float = 1e-3,
    modes: Sequence[str] = MODES,
    generator: torch.Generator | None = None,
) -> float:
    r"""Trains the fusion layer on ``triples`` with FedE's margin ranking loss
    (:math:`\beta` = ``margin``, FedE: 10) and uniform negatives; returns the
    mean loss of the last epoch (``epochs=0``: no training, ``nan``).

    The two models are frozen, so their scores of every corruption of every
    triple are computed once (up to :data:`SCORE_TABLE_BYTES`) and each step
    gathers the sampled negatives' scores: the same negatives and losses as
    scoring them through the models, up to float rounding, at a fraction of
    the cost (RotatE, 13k entities, 512 × 256 negatives a step: seconds a
    step through the models)."""
    generator = generator or torch.Generator().manual_seed(0)
    sampler = UniformNegativeSampler(fusion.num_entities, num_negatives)
    loss_fn = MarginRankingLoss(margin)
    opt = torch.optim.Adam(fusion.linear.parameters(), lr=lr)
    tables = _score_tables(fusion, triples, modes) if epochs > 0 else None
    last = float("nan")
    for _ in range(int(epochs)):
        total, steps = 0.0, 0
        perm = torch.randperm(triples.size(0), generator=generator)
        for start in range(0, triples.size(0), batch_size):
            rows = perm[start : start + batch_size].to(triples.device)
            batch = triples[rows]
            for mode in modes:
                neg = sampler.sample(batch, mode, generator).to(batch.device)
                pos, negs = _step_scores(fusion, tables, rows, batch, neg, mode)
                value = loss_fn(pos, negs)
                opt.zero_grad(set_to_none=True)
                value.backward()
                opt.step()
                total, steps = total + float(value.detach()), steps + 1
            advance()  # the open progress bar: one per batch, as in training
        last = total / max(1, steps)
    return last


#: the three models :func:`fuse_and_evaluate` compares, in its output's order.
FUSION_MODELS = ("fused", "single", "federated")
#: the fitted layer's values a client reports (:func:`fuse_client`'s ``"fusion"``).
FUSION_PARAMS = ("w_single", "w_federated", "bias", "fit_loss")


@dataclass(frozen=True)
class FusionSettings:
    r"""The options of FedE's model fusion step (``fedgraph fuse``'s and the
    Flower run config's ``fusion.*`` keys).

    Args:
        epochs (int): fitting epochs of the layer (``0``: no fitting, the
            plain sum of the two scores). (default: :obj:`100`)
        lr (float): Adam learning rate of the layer. (default: :obj:`0.1`)
        fit_on (str): split the layer is fitted on (``"valid"``, as FedE's
            code, or ``"train"``). (default: ``"valid"``)
        batch_size (int): (default: :obj:`512`)
        num_negatives (int): uniform negatives per positive and direction.
            (default: :obj:`256`)
        margin (float): FedE's :math:`\beta`. (default: :obj:`10.0`)
        seed (int): seed of the negatives (client ``c`` draws from
            ``seed * 7919 + c``). (default: :obj:`0`)
    """

    epochs: int = 100
    lr: float = 0.1
    fit_on: str = "valid"
    batch_size: int = 512
    num_negatives: int = 256
    margin: float = 10.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"`epochs` must be 0 or more (got {self.epochs})")
        if self.fit_on not in ("valid", "train"):
            raise ValueError(
                f"`fit_on` must be 'valid' or 'train' (got {self.fit_on!r})"
            )
        for name in ("batch_size", "num_negatives"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"`{name}` must be positive (got {getattr(self, name)})"
                )

    def fit_kwargs(self) -> dict[str, Any]:
        r"""The :func:`fit_fusion` options."""
        return {
            "epochs": self.epochs,
            "lr": self.lr,
            "batch_size": self.batch_size,
            "num_negatives": self.num_negatives,
            "margin": self.margin,
        }


def fuse_client(
    client: Any,
    single: KGEModel,
    federated: KGEModel,
    *,
    fit_split: str = "valid",
    split: str = "test",
    seed: int = 0,
    **fit_kwargs: Any,
) -> tuple[dict[str, Any], dict[str, LinkPredState]]:
    r"""FedE's model fusion on one client: fits a :class:`ScoreFusion` of
    ``single`` and ``federated`` (moved to the federated model's device) on
    the client's ``fit_split`` triples, then ranks ``split`` with the three
    models under the client's protocol (:meth:`KGEClient.rank
    <fedgraph.federated.kge.client.KGEClient.rank>`).

    Returns:
        ``(row, states)``: ``row = {"client", "n_test", "fusion": {"w_single",
        "w_federated", "bias", "fit_loss"}}`` and the ranking state of each of
        :data:`FUSION_MODELS` (mergeable across clients).
    """
    c = int(client.client_id)
    describe(f"fuse client {c}")
    device = next(federated.parameters()).device
    single = single.to(device)
    fusion = ScoreFusion(single, federated).to(device)
    loss = fit_fusion(
        fusion,
        client.shard.graph.triples(fit_split).to(device),
        generator=torch.Generator().manual_seed(int(seed) * 7919 + c),
        **fit_kwargs,
    )
    triples = client.shard.graph.triples(split)
    models = {"fused": fusion, "single": single, "federated": federated}
    states = {name: client.rank(triples, models[name]) for name in FUSION_MODELS}
    w_single, w_fed = fusion.linear.weight.detach().view(-1).tolist()
    row = {
        "client": c,
        "n_test": int(triples.size(0)),
        "fusion": {
            "w_single": w_single,
            "w_federated": w_fed,
            "bias": float(fusion.linear.bias.detach()),
            "fit_loss": None if loss != loss else loss,  # nan: not fitted
        },
    }
    return row, states


def summarize_fusion(
    parts: Sequence[tuple[Mapping[str, Any], Mapping[str, LinkPredState]]],
) -> dict[str, Any]:
    r"""Merges the :func:`fuse_client` outputs of all clients (in client
    order) into :func:`fuse_and_evaluate`'s result: the query-weighted
    metrics of each model and a row per client."""
    rows = []
    for row, states in parts:
        out = {"client": int(row["client"]), "n_test": int(row["n_test"])}
        out.update(states["fused"].compute())
        for name in FUSION_MODELS[1:]:
            out[name] = states[name].compute()
        out["fusion"] = dict(row["fusion"])
        rows.append(out)
    merged = {
        m: LinkPredState.merged([states[m] for _, states in parts]).compute()
        for m in FUSION_MODELS
    }
    return {
        "weighted": merged["fused"],
        "weighted_single": merged["single"],
        "weighted_federated": merged["federated"],
        "clients": rows,
    }


def fuse_and_evaluate(
    clients: Mapping[int, Any],
    single: Mapping[int, KGEModel],
    federated: Mapping[int, KGEModel],
    *,
    fit_split: str = "valid",
    split: str = "test",
    seed: int = 0,
    **fit_kwargs: Any,
) -> dict[str, Any]:
    r"""FedE's model fusion as a final step: :func:`fuse_client` on every
    client (FedE's code fits the layer on the validation triples), merged by
    :func:`summarize_fusion`.

    The models are frozen in place (pass copies, e.g.
    :meth:`KGEClient.evaluation_model`).

    Args:
        clients (Mapping[int, KGEClient]): the clients (their shards,
            filters and ranked directions).
        single (Mapping[int, KGEModel]): each client's model trained alone.
        federated (Mapping[int, KGEModel]): each client's federated model.
        fit_split (str, optional): triples the fusion layer is fitted on.
            (default: ``"valid"``)
        split (str, optional): triples ranked. (default: ``"test"``)
        seed (int, optional): seed of the negatives (client ``c`` draws from
            ``seed * 7919 + c``). (default: :obj:`0`)
        **fit_kwargs: :func:`fit_fusion` options (``epochs``, ``lr``, …).

    Returns:
        ``{"weighted", "weighted_single", "weighted_federated", "clients"}``:
        the merged (query-weighted) metrics of the fused, single and
        federated models, and per client ``{"client", "n_test", <fused
        metrics>, "single", "federated", "fusion": {"w_single",
        "w_federated", "bias", "fit_loss"}}``.
    """
    missing = sorted(set(clients) - set(single)) + sorted(set(clients) - set(federated))
    if missing:
        raise ValueError(f"No single or federated model for clients {missing}")
    parts = [
        fuse_client(
            clients[c],
            single[c],
            federated[c],
            fit_split=fit_split,
            split=split,
            seed=seed,
            **fit_kwargs,
        )
        for c in sorted(clients)
    ]
    return summarize_fusion(parts)


__all__ = [
    "FusionSettings",
    "fit_fusion",
    "fuse_client",
    "summarize_fusion",
    "fuse_and_evaluate",
    "FUSION_MODELS",
    "FUSION_PARAMS",
]
