r"""What :func:`~fedgraph.pipeline` returns: :class:`PipelineResult`, and
its folder (:meth:`PipelineResult.save`, :meth:`PipelineResult.load`).

A saved result is a folder holding ``results.json`` (the
:func:`fedgraph.eval.write_results` format of ``fedgraph train``: weighted
and per-client test metrics, the curve, the communication totals, the
settings) and ``models.pt`` (every trained model with its names and known
triples, :mod:`fedgraph.runtime.predict`; tensors, strings and numbers only,
read with ``torch.load(weights_only=True)``). ``fedgraph predict RUN`` reads
such a folder, or a ``fedgraph train`` run of a federated KGE algorithm
(:func:`from_train_run`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedgraph.runtime.predict import (
    Prediction,
    TrainedKGE,
    TrainedRGCN,
    from_state,
    kge_spec,
)

#: the ``format`` entry of ``models.pt``
MODELS_FORMAT = "fedgraph.pipeline.models"
RESULTS, MODELS = "results.json", "models.pt"


@dataclass
class PipelineResult:
    r"""A finished run of :func:`~fedgraph.pipeline`.

    Attributes:
        family (str): ``"kge"``, ``"rgcn"`` or ``"text"``.
        algorithm (str): the algorithm's registry name (or ``independent``,
            ``centralized``).
        metrics (dict[str, float]): the weighted test metrics (the KGE and
            text families: of the best validation round; R-GCN: FedAlign's
            protocol, the last round's accuracy).
        client_metrics (dict[int, dict[str, float]]): each client's.
        history (list[dict]): one entry per round (baselines: per client,
            its validations), the learning curves.
        comm (dict[str, int]): communication totals (the ledger's).
        comm_per_round (dict[int, dict[str, int]]): round → totals.
        rounds (int): rounds (baselines: epochs) trained.
        best_round (int): the round the test used (0 when none).
        settings (dict): every setting of the run (JSON).
        trained (dict[int, TrainedKGE or TrainedRGCN]): client → trained
            model with its names (a Centralized run: one, under ``0``; the
            text family: none).
        simulation (SimulationResult, optional): the round loop's own result
            (a federated run; :obj:`None` once loaded): ``results.json`` is
            written from it, as ``fedgraph train`` writes it.
    """

    family: str
    algorithm: str
    metrics: dict[str, float]
    client_metrics: dict[int, dict[str, float]]
    history: list[Any] = field(default_factory=list)
    comm: dict[str, int] = field(default_factory=dict)
    comm_per_round: dict[int, dict[str, int]] = field(default_factory=dict)
    rounds: int = 0
    best_round: int = 0
    settings: dict[str, Any] = field(default_factory=dict)
    trained: dict[int, Any] = field(default_factory=dict, repr=False)
    simulation: Any = field(default=None, repr=False)

    @property
    def models(self) -> dict[int, Any]:
        r"""Client → its trained ``torch.nn.Module``."""
        return {c: t.model for c, t in self.trained.items()}

    def predict(
        self,
        head: str | None = None,
        relation: str | None = None,
        tail: str | None = None,
        *,
        k: int = 10,
        filtered: bool = True,
        client: int | None = None,
        entity: str | None = None,
    ) -> list[Prediction]:
        r"""Top-``k`` answers by name, best first.

        KGE: the tails of ``(head, relation, ?)`` or the heads of ``(?,
        relation, tail)`` scored against every entity of the model;
        ``filtered`` leaves out the known true triples (train and valid).
        R-GCN: the class probabilities of node ``entity``. A federated run
        answers with one ``client``'s model (needed unless the run has one
        model).

        Raises:
            ValueError: an unknown name (with the closest ones), client,
                or a query the family does not answer.
        """
        trained = self.model_of(client)
        if isinstance(trained, TrainedRGCN):
            if entity is None or head is not None or tail is not None:
                raise ValueError(
                    "an R-GCN run predicts the classes of an `entity` (got "
                    f"entity={entity!r}, head={head!r}, tail={tail!r})"
                )
            return trained.class_scores(entity, k)
        if relation is None or entity is not None:
            raise ValueError(
                "a KGE query is `head` + `relation` or `relation` + `tail` "
                f"(got relation={relation!r}, entity={entity!r})"
            )
        return trained.top_k(
            head=head, relation=relation, tail=tail, k=k, filtered=filtered
        )

    def model_of(self, client: int | None = None) -> Any:
        r"""The trained model of ``client`` (:obj:`None`: the only one)."""
        if not self.trained:
            raise ValueError(
                f"a {self.family} run keeps no model that answers queries "
                "(predict answers the KGE and R-GCN families)"
            )
        ids = sorted(self.trained)
        if client is None:
            if len(ids) > 1:
                raise ValueError(
                    f"`client` is needed: this {self.algorithm} run has one model "
                    f"per client {ids}"
                )
            return self.trained[ids[0]]
        if isinstance(client, bool) or client not in self.trained:
            raise ValueError(f"`client` must be one of {ids} (got {client!r})")
        return self.trained[client]

    def save(self, path: str | os.PathLike[str]) -> Path:
        r"""Writes ``results.json`` and ``models.pt`` into folder ``path``
        (each to a temporary name, then renamed). A folder that holds files
        fedgraph did not write is refused (:mod:`fedgraph.guard`); a folder
        this method wrote is replaced. Returns the folder."""
        from fedgraph import guard
        from fedgraph.data.io import atomic_torch_save

        folder = Path(path)
        with guard.command():  # locked while written
            guard.claim(folder, (RESULTS, MODELS), option="path")
            self.write_results(folder / RESULTS)
            models = {c: t.to_state() for c, t in self.trained.items()}
            atomic_torch_save(
                {"format": MODELS_FORMAT, "clients": models}, folder / MODELS
            )
        return folder

    def write_results(self, path: Path) -> Path:
        r"""``path`` in the :func:`fedgraph.eval.write_results` format (a
        federated run's as ``fedgraph train`` writes it:
        :meth:`~fedgraph.runtime.SimulationResult.write_results`)."""
        from fedgraph.eval.results import write_results

        recorded = {**self.settings, "family": self.family, "algorithm": self.algorithm}
        if self.simulation is not None:
            return Path(self.simulation.write_results(path, settings=recorded))
        rows = [{"client": c, **m} for c, m in sorted(self.client_metrics.items())]
        for row in rows:
            row.setdefault("n_test", int(row.pop("n_triples", 0)))
        return write_results(
            path,
            weighted=self.metrics,
            clients=rows,
            rounds=self.rounds,
            seconds_per_round=float(self.settings.get("seconds_per_round", 0.0)),
            comm=self.comm or None,
            settings=recorded,
            history=self.history,
            best_round=self.best_round,
            comm_per_round={str(k): v for k, v in self.comm_per_round.items()},
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PipelineResult:
        r"""The result :meth:`save` wrote into ``path``."""
        import torch

        from fedgraph.eval.results import read_results

        folder = Path(path)
        for name in (RESULTS, MODELS):
            if not (folder / name).is_file():
                raise FileNotFoundError(
                    f"`{folder}` holds no {name}: not a saved pipeline result"
                )
        doc = read_results(folder / RESULTS)
        saved = torch.load(folder / MODELS, weights_only=True)
        if not isinstance(saved, dict) or saved.get("format") != MODELS_FORMAT:
            raise ValueError(f"{folder / MODELS} is not a fedgraph models file")
        settings = dict(doc.get("settings", {}))
        return cls(
            family=str(settings.get("family", "kge")),
            algorithm=str(settings.get("algorithm", "")),
            metrics=_weighted(doc),
            client_metrics=_client_rows(doc["clients"]),
            history=list(doc.get("history", [])),
            comm=dict(doc.get("comm", {})),
            comm_per_round={
                int(k): v for k, v in doc.get("comm_per_round", {}).items()
            },
            rounds=int(doc["rounds"]),
            best_round=int(doc.get("best_round", 0) or 0),
            settings=settings,
            trained={int(c): from_state(s) for c, s in saved["clients"].items()},
        )


def _weighted(doc: Mapping[str, Any]) -> dict[str, float]:
    r"""``results.json``'s weighted test metrics, a two-model method's
    ``weighted_global`` ones back under their ``global_`` names."""
    split = doc.get("weighted_global", {})
    return {**doc.get("weighted", {}), **{f"global_{k}": v for k, v in split.items()}}


def _client_rows(rows: list[Mapping[str, Any]]) -> dict[int, dict[str, float]]:
    r"""``results.json``'s client rows as client → metrics."""
    return {
        int(r["client"]): {k: v for k, v in r.items() if k != "client"} for r in rows
    }


def from_simulation(
    family: str, algorithm: str, res: Any, record: dict[str, Any], trained: dict
) -> PipelineResult:
    r"""The :class:`PipelineResult` of a run of the round loop (``res``, a
    :class:`~fedgraph.runtime.SimulationResult`): its test metrics, curve,
    communication, ``record``\ ed settings and ``trained`` models."""
    return PipelineResult(
        family=family,
        algorithm=algorithm,
        metrics=dict(res.test),
        client_metrics={int(c): dict(m) for c, m in res.test_clients.items()},
        history=list(res.history),
        comm=dict(res.comm),
        comm_per_round={int(r): dict(v) for r, v in res.comm_per_round.items()},
        rounds=res.rounds,
        best_round=res.best_round,
        settings={**record, "seconds_per_round": res.seconds_per_round},
        trained=trained,
        simulation=res,
    )


def kge_trained(
    fed: Any,
    strategy: Any,
    clients: Mapping[int, Any],
    model_kwargs: Mapping[str, Any] | None = None,
) -> dict[int, TrainedKGE]:
    r"""Each KGE client's tested model: the model its evaluation scores
    (:meth:`~fedgraph.federated.kge.KGEClient.evaluation_model` of the
    strategy's test payload: with the server's entity rows when the run
    evaluates with them), its names and its train + valid triples."""
    out = {}
    for c, client in clients.items():
        payload = strategy.configure_evaluate(0, [c], "test")[c]
        model = client.evaluation_model(payload)
        shard = client.shard
        out[c] = TrainedKGE(
            model,
            kge_spec(model, model_kwargs, client.regime.reciprocal),
            shard_names(fed.entity_names, shard.entity_ids, shard.graph.entity_names),
            shard_names(
                fed.relation_names, shard.relation_ids, shard.graph.relation_names
            ),
            shard.graph.all_triples(
                [s for s in ("train", "valid") if s in shard.graph.split_names]
            ),
        )
    return out


def shard_names(
    global_names: list[str] | None, ids: Any, local_names: list[str] | None
) -> list[str]:
    r"""The names of a shard's local ids: the global names of ``ids``, else
    the shard's own names, else the ids written out."""
    if global_names:
        return [global_names[int(i)] for i in ids]
    if local_names:
        return list(local_names)
    return [str(int(i)) for i in ids]


def from_train_run(run_dir: str | os.PathLike[str]) -> PipelineResult:
    r"""A ``fedgraph train`` run of a federated KGE algorithm as a
    :class:`PipelineResult`: its ``results.json`` and the best round's
    models, rebuilt from ``progress.json`` and ``checkpoints/best.pt``
    (:func:`~fedgraph.runtime.trained.load_trained_run`: the dataset the
    run recorded must be readable)."""
    from fedgraph.eval.results import read_results
    from fedgraph.runtime.trained import load_trained_run

    folder = Path(run_dir)
    _check_train_run(folder)
    run = load_trained_run(folder, "best")
    done = folder / RESULTS
    doc = read_results(done) if done.is_file() else {}
    return PipelineResult(
        family="kge",
        algorithm=str(run.meta.get("algorithm", "")),
        metrics=_weighted(doc),
        client_metrics=_client_rows(doc.get("clients", [])),
        history=list(doc.get("history", [])),
        comm=dict(doc.get("comm", {})),
        rounds=int(doc.get("rounds", 0)),
        best_round=int(doc.get("best_round", 0) or 0),
        settings=dict(run.meta),
        trained=kge_trained(
            run.fed, run.strategy, run.clients, run.meta.get("model_kwargs")
        ),
    )


def _check_train_run(folder: Path) -> None:
    r"""Refuses a ``fedgraph train`` run whose models :func:`from_train_run`
    cannot rebuild (an R-GCN or text run, a baseline)."""
    import json

    meta = json.loads((folder / "progress.json").read_text()).get("settings", {})
    family = meta.get("family", "kge")
    if (
        family != "kge"
        or meta.get("setting")
        or meta.get("algorithm")
        in (
            "independent",
            "centralized",
        )
    ):
        what = family if family != "kge" else meta.get("algorithm", "baseline")
        raise ValueError(
            f"`{folder}` is a {what} run of `fedgraph train`: its models are read "
            "back for the federated KGE algorithms only; run it with "
            "`fedgraph.pipeline` and `PipelineResult.save` to query it"
        )


__all__ = [
    "PipelineResult",
    "from_simulation",
    "kge_trained",
    "shard_names",
    "from_train_run",
]
