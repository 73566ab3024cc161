r"""FedE's model fusion over Flower: a client's
:func:`~fedgraph.training.fusion.fuse_client` output as a reply's flat
metrics and back (pure functions; Flower itself is not imported)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedgraph.eval.metrics import LinkPredState
from fedgraph.training.fusion import FUSION_MODELS, FUSION_PARAMS


def fusion_to_metrics(
    row: Mapping[str, Any], states: Mapping[str, LinkPredState]
) -> dict[str, float]:
    r"""A :func:`~fedgraph.training.fusion.fuse_client` output as a payload's flat metrics
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


__all__ = ["fusion_to_metrics", "fusion_from_metrics"]
