r"""FedE's model fusion (FedE §2.2.3): a per-client linear combination of the
scores of a single-KG model and of the federated model."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from fedgraph.eval.metrics import LinkPredState
from fedgraph.models.kge import MODES, TAIL_BATCH, KGEModel
from fedgraph.models.losses import MarginRankingLoss
from fedgraph.models.sampling import NegativeSampler


class ScoreFusion(nn.Module):
    r"""Fusion of two KGE models over the same (local) entities and relations
    (FedE Eq. 5–6):

    .. math::
        s_{(h,r,t)} = \mathbf{W} [f^s_r(h, t); f^f_r(h, t)] + b

    trained with the margin ranking loss
    :math:`\max(0, \beta - s_{(h,r,t)} + s_{(h,r,t')})` (:func:`fit_fusion`).
    The two models are frozen. It exposes the scoring API that
    :func:`~fedgraph.eval.rank_triples` uses (``score_t``, ``score_h``,
    ``score_hrt``), so a fused client is evaluated like any model.

    Args:
        single (KGEModel): trained without federation (FedE's "Single").
        federated (KGEModel): trained with FedE.
    """

    def __init__(self, single: KGEModel, federated: KGEModel) -> None:
        super().__init__()
        if (single.num_entities, single.num_relations) != (
            federated.num_entities,
            federated.num_relations,
        ):
            raise ValueError(
                "`single` and `federated` must share entities and relations (got "
                f"{single.num_entities}/{single.num_relations} and "
                f"{federated.num_entities}/{federated.num_relations})"
            )
        self.single, self.federated = single, federated
        for p in list(single.parameters()) + list(federated.parameters()):
            p.requires_grad_(False)
        self.linear = nn.Linear(2, 1)
        with torch.no_grad():  # start as the plain sum of the two scores
            self.linear.weight.fill_(1.0)
            self.linear.bias.zero_()
        self.num_entities = single.num_entities
        self.num_relations = single.num_relations

    def _fuse(self, a: Tensor, b: Tensor) -> Tensor:
        return self.linear(torch.stack([a, b], dim=-1)).squeeze(-1)

    def score_hrt(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        return self._fuse(
            self.single.score_hrt(head, rel, tail),
            self.federated.score_hrt(head, rel, tail),
        )

    def score_t(
        self, head: Tensor, rel: Tensor, candidates: Tensor | None = None
    ) -> Tensor:
        return self._fuse(
            self.single.score_t(head, rel, candidates),
            self.federated.score_t(head, rel, candidates),
        )

    def score_h(
        self, rel: Tensor, tail: Tensor, candidates: Tensor | None = None
    ) -> Tensor:
        return self._fuse(
            self.single.score_h(rel, tail, candidates),
            self.federated.score_h(rel, tail, candidates),
        )

    def score_negatives(
        self, positive: Tensor, negative: Tensor, mode: str = TAIL_BATCH
    ) -> Tensor:
        return self._fuse(
            self.single.score_negatives(positive, negative, mode),
            self.federated.score_negatives(positive, negative, mode),
        )

    def __repr__(self) -> str:
        w = self.linear.weight.detach().view(-1).tolist()
        return f"ScoreFusion(w_single={w[0]:.3f}, w_fed={w[1]:.3f})"


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
    mean loss of the last epoch (``epochs=0``: no training, ``nan``)."""
    generator = generator or torch.Generator().manual_seed(0)
    sampler = NegativeSampler(fusion.num_entities, num_negatives)
    loss_fn = MarginRankingLoss(margin)
    opt = torch.optim.Adam(fusion.linear.parameters(), lr=lr)
    last = float("nan")
    for _ in range(int(epochs)):
        total, steps = 0.0, 0
        perm = torch.randperm(triples.size(0), generator=generator)
        for start in range(0, triples.size(0), batch_size):
            batch = triples[perm[start : start + batch_size]]
            for mode in modes:
                neg = sampler.sample(batch, mode, generator).to(batch.device)
                pos = fusion.score_hrt(batch[:, 0], batch[:, 1], batch[:, 2])
                value = loss_fn(pos, fusion.score_negatives(batch, neg, mode))
                opt.zero_grad(set_to_none=True)
                value.backward()
                opt.step()
                total, steps = total + float(value.detach()), steps + 1
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


def fusion_to_metrics(
    row: Mapping[str, Any], states: Mapping[str, LinkPredState]
) -> dict[str, float]:
    r"""A :func:`fuse_client` output as a payload's flat metrics
    (``"fused/head/rr"``, …, ``"fusion/w_single"``, …, ``"n_test"``): what a
    Flower client replies to the fusion message. ``fit_loss`` is left out
    when the layer was not fitted."""
    out = {
        f"{name}/{key}": v
        for name in FUSION_MODELS
        for key, v in states[name].to_dict().items()
    }
    out.update(
        {f"fusion/{k}": float(v) for k, v in row["fusion"].items() if v is not None}
    )
    out["n_test"] = int(row["n_test"])
    return out


def fusion_from_metrics(
    client: int, metrics: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, LinkPredState]]:
    r"""Inverse of :func:`fusion_to_metrics` for client ``client``."""
    states = {}
    for name in FUSION_MODELS:
        prefix = f"{name}/"
        states[name] = LinkPredState.from_dict(
            {k[len(prefix) :]: v for k, v in metrics.items() if k.startswith(prefix)}
        )
    params = {k: metrics.get(f"fusion/{k}") for k in FUSION_PARAMS}
    params = {k: None if v is None else float(v) for k, v in params.items()}
    return {
        "client": int(client),
        "n_test": int(metrics["n_test"]),
        "fusion": params,
    }, states


def single_model_settings(
    single_dir: str | os.PathLike[str],
    fallback: Mapping[str, Any],
    results: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    r"""Model, width and margin of the Independent models in ``single_dir``:
    read from ``results`` (default: ``single_dir/results.json``) when it
    exists, else ``fallback``'s ``model``/``dim``/``gamma`` (the federated
    run's). A results file of another setting raises a :class:`ValueError`
    naming it."""
    path = Path(results) if results is not None else Path(single_dir) / "results.json"
    if not path.is_file():
        return {
            "model": fallback["model"],
            "dim": int(fallback["dim"]),
            "gamma": float(fallback["gamma"]),
            "from": "the federated run (no Independent results file)",
        }
    s = json.loads(path.read_text()).get("settings", {})
    if s.get("setting", "independent") != "independent":
        raise ValueError(f"Single-model results {path} are a {s.get('setting')!r} run")
    return {
        "model": s.get("model", fallback["model"]),
        "dim": int(s.get("hidden_channels", fallback["dim"])),
        "gamma": float(s.get("gamma", fallback["gamma"])),
        "from": str(path),
    }


def load_single_model(
    single_dir: str | os.PathLike[str], shard: Any, settings: Mapping[str, Any]
) -> KGEModel:
    r"""Client ``shard.client_id``'s best Independent model from
    ``single_dir/trainerK.pt`` (a
    :class:`~fedgraph.training.kge_trainer.KGETrainer` checkpoint), built as
    ``settings`` (:func:`single_model_settings`) says, on the CPU. A missing
    file or one that does not fit the client raises an error naming it."""
    from fedgraph.models.kge import resolve_model

    c = shard.client_id
    path = Path(single_dir) / f"trainer{c}.pt"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the single-model folder must hold the Independent "
            f"run's trainer{c}.pt for client {c}"
        )
    from fedgraph.data.checkpoint import load_checkpoint

    state = load_checkpoint(path, keys=("model",))
    weights = state["best_state"] if state.get("best_state") else state["model"]
    model = resolve_model(
        settings["model"],
        shard.num_entities,
        shard.num_relations,
        settings["dim"],
        gamma=settings["gamma"],
    )
    try:
        model.load_state_dict(weights)
    except RuntimeError as exc:
        raise ValueError(
            f"{path} does not fit client {c} ({shard.num_entities} entities, "
            f"{shard.num_relations} relations, {settings['model']} dim "
            f"{settings['dim']}): is it the same partition and model? "
            f"({str(exc).splitlines()[0]})"
        ) from None
    return model


__all__ = [
    "ScoreFusion",
    "FusionSettings",
    "fit_fusion",
    "fuse_client",
    "summarize_fusion",
    "fuse_and_evaluate",
    "fusion_to_metrics",
    "fusion_from_metrics",
    "single_model_settings",
    "load_single_model",
    "FUSION_MODELS",
]
