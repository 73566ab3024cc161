r"""The KGE family of :func:`~fedgraph.pipeline`: a federated KG from a
dataset and a partition, the federated algorithms (:func:`build_kge_run`,
the federation ``fedgraph train`` builds too) and the Independent and
Centralized baselines."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Mapping
from typing import Any

import torch

from fedgraph.runtime.loop import LoopSettings
from fedgraph.runtime.pipeline_result import (
    PipelineResult,
    from_simulation,
    kge_trained,
    shard_names,
)
from fedgraph.runtime.pipeline_run import resumable_loop
from fedgraph.runtime.pipeline_settings import training_settings
from fedgraph.runtime.predict import TrainedKGE, kge_spec

#: the KGE baselines: one model per client, or one on the union
KGE_BASELINES = ("independent", "centralized")
#: the clients of a single KG partitioned by default (``"relation"``)
DEFAULT_CLIENTS = 3


def load_federated_kg(
    dataset: Any, partition: Any, kwargs: dict[str, Any], seed: int, root: Any
) -> Any:
    r"""The :class:`~fedgraph.data.shard.FederatedKG` of ``dataset`` and
    ``partition`` (see :func:`~fedgraph.pipeline`)."""
    from fedgraph.data import load_dataset
    from fedgraph.data.shard import FederatedKG
    from fedgraph.partition import Partitioner, resolve_partitioner

    if isinstance(partition, FederatedKG):
        return partition
    if isinstance(partition, (str, os.PathLike)) and os.path.isdir(partition):
        return _federated(load_dataset(partition), "partition")
    data = dataset
    if isinstance(dataset, (str, os.PathLike)):
        data = load_dataset(dataset, root)
    if isinstance(data, FederatedKG):
        if partition is not None:
            raise ValueError(
                f"`partition` {partition!r}: the dataset is already federated "
                f"({data.num_clients} clients); leave `partition` out"
            )
        return data
    if partition is None and not kwargs:
        partition, kwargs = "relation", {"num_clients": DEFAULT_CLIENTS}
    if not isinstance(partition, Partitioner):
        kwargs.setdefault("seed", seed)
        partition = resolve_partitioner(partition or "relation", **kwargs)
    return _federated(partition(data), "partition")


def _federated(fed: Any, what: str) -> Any:
    from fedgraph.data.shard import FederatedKG

    if not isinstance(fed, FederatedKG):
        raise ValueError(
            f"`{what}` gave a {type(fed).__name__}, not a federated KG (a folder "
            "of client0/ client1/ … triple folders)"
        )
    return fed


def run_kge(**a: Any) -> PipelineResult:
    from fedgraph.eval.protocol import resolve_protocol
    from fedgraph.eval.unseen import check_unseen
    from fedgraph.federated.kge.setup import KGESettings

    algorithm = kge_algorithm(a["algorithm"], a["algorithm_kwargs"])
    protocol = resolve_protocol(a["options"]["evaluation"])
    settings = training_settings(
        KGESettings,
        a["training"],
        a["seed"],
        model=a["model"],
        evaluate_with=protocol.model_scored,
    )
    settings = _with_model_kwargs(settings, a["model_kwargs"], a["algorithm_kwargs"])
    fed = load_federated_kg(
        a["dataset"], a["partition"], a["partition_kwargs"], a["seed"], a["root"]
    )
    fed = check_unseen(fed)
    record = _record(a, settings, protocol.name, fed.num_clients)
    if algorithm in KGE_BASELINES:
        if a["options"]["folder"] is not None:
            raise ValueError(
                f"`out` applies to federated KGE algorithms (got {algorithm}: "
                "`fedgraph train --out` checkpoints a baseline)"
            )
        if a["options"]["local_training"] != "sequential":
            raise ValueError(
                f"`local_training` {a['options']['local_training']!r} applies to "
                f"federated KGE algorithms (got {algorithm})"
            )
        return _kge_baseline(fed, algorithm, settings, a, record)
    return _kge_federated(fed, algorithm, settings, a, record)


def kge_algorithm(name: str, kwargs: Mapping[str, Any]) -> str:
    r"""The registry name of the KGE algorithm (or baseline) ``name``, after
    checking that it declares every key of ``kwargs``."""
    from fedgraph.federated.algorithms import get, normalize

    algorithm = normalize(name)
    if algorithm in KGE_BASELINES:
        for key in kwargs:
            raise ValueError(f"`algorithm_kwargs`: {algorithm} has no setting {key!r}")
        return algorithm
    alg = get(algorithm, "kge")
    try:  # a key of another algorithm is refused
        alg.parse(dict(kwargs))
    except ValueError as exc:
        raise ValueError(f"`algorithm_kwargs`: {exc}") from None
    return alg.name


def _with_model_kwargs(
    settings: Any, model_kwargs: dict[str, Any], algorithm_kwargs: dict[str, Any]
) -> Any:
    r"""``settings`` with the algorithm's own settings in ``extra`` and the
    model's own hyperparameters in ``model_kwargs``."""
    return dataclasses.replace(
        settings,
        extra={**settings.extra, **algorithm_kwargs},
        model_kwargs={**settings.model_kwargs, **model_kwargs},
    )


def _record(a: dict[str, Any], settings: Any, protocol: str, clients: int) -> dict:
    r"""The run's settings as recorded in ``results.json``."""
    data = a["dataset"] if a["dataset"] is not None else a["partition"]
    return {
        "data": str(data)
        if isinstance(data, (str, os.PathLike))
        else type(data).__name__,
        "model": a["model"],
        "model_kwargs": dict(a["model_kwargs"]),
        "training": dataclasses.asdict(settings),
        "loop": resumable_loop(a["loop"]),
        "eval_protocol": protocol,
        "corrupt": a["options"]["corrupt"],
        "subsampling": a["options"]["subsampling"],
        "local_training": a["options"]["local_training"],
        "num_clients": clients,
    }


def _kge_federated(
    fed: Any, algorithm: str, settings: Any, a: dict[str, Any], record: dict[str, Any]
) -> PipelineResult:
    from fedgraph.runtime.pipeline_run import run_pipeline_loop

    strategy, clients = build_kge_run(
        algorithm,
        fed,
        settings,
        protocol=record["eval_protocol"],
        corrupt=a["options"]["corrupt"],
        subsampling=a["options"]["subsampling"],
    )
    record["strategy_params"] = strategy.get_params()
    res = run_pipeline_loop(
        strategy,
        clients,
        a["loop"],
        record,
        a["options"]["folder"],
        local_training=a["options"]["local_training"],
    )
    return from_simulation(
        "kge",
        algorithm,
        res,
        record,
        kge_trained(fed, strategy, clients, settings.model_kwargs),
    )


def build_kge_run(
    algorithm: str,
    fed: Any,
    settings: Any,
    *,
    protocol: Any = "fedlu",
    corrupt: str = "both",
    subsampling: bool = True,
) -> tuple[Any, dict[int, Any]]:
    r"""The strategy and clients of the KGE ``algorithm`` on ``fed``
    (:func:`~fedgraph.federated.kge.setup.build_kge_federation`), every
    client evaluating under ``protocol`` (an
    :class:`~fedgraph.eval.protocol.EvalProtocol` or its name), trained with
    the ``corrupt`` side's negatives (:func:`corruption_modes`) and, with
    ``subsampling=False``, without frequency weights: the federation of
    :func:`pipeline` and of ``fedgraph train``."""
    from fedgraph.federated.kge.setup import build_kge_federation

    modes = corruption_modes(corrupt)
    strategy, clients = build_kge_federation(algorithm, fed, settings)
    for client in clients.values():
        client.use_protocol(protocol)
        client.modes = modes
        if not subsampling:
            client.weights = None
    return strategy, clients


def corruption_modes(corrupt: str) -> tuple[str, ...]:
    r"""The training corruption modes of ``corrupt``: ``"both"`` (a step
    per side and batch) or ``"tail"`` (FedE's code)."""
    from fedgraph.models.kge import MODES

    if corrupt not in ("both", "tail"):
        raise ValueError(f"`corrupt` must be 'both' or 'tail' (got {corrupt!r})")
    return ("tail-batch",) if corrupt == "tail" else tuple(MODES)


def run_kge_baseline(
    fed: Any,
    setting: str,
    s: Any,
    loop: LoopSettings,
    *,
    protocol: Any,
    out: Any,
    data_name: str,
    corrupt: str = "both",
    subsampling: bool = True,
    record: Mapping[str, Any] | None = None,
    command: str = "",
    log: bool = False,
    progress_file: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    r"""Independent or Centralized on ``fed``
    (:func:`~fedgraph.runtime.baselines.run_baseline`) with the training
    settings ``s`` (a :class:`~fedgraph.federated.kge.setup.KGESettings`),
    the loop's rounds as epochs, evaluated under ``protocol``, trained with
    the ``corrupt`` side's negatives, checkpoints under ``out`` (each
    recording ``record``); ``log``: one line per validation;
    ``progress_file``: rewritten with ``record`` and the validation history
    after every validation. The baselines of :func:`pipeline` and of
    ``fedgraph train``."""
    from fedgraph.runtime.baselines import run_baseline

    return run_baseline(
        fed,
        setting=setting,
        model=s.model,
        model_kwargs=s.model_kwargs,
        hidden_channels=s.dim,
        gamma=s.gamma,
        out=out,
        command=command,
        record=None if record is None else dict(record),
        protocol=protocol,
        loss=s.loss,
        modes=corruption_modes(corrupt),
        subsampling=subsampling,
        lr=s.lr,
        optimizer=s.optimizer,
        batch_size=s.batch_size,
        num_negatives=s.num_negatives,
        eval_every=loop.eval_every,
        patience=loop.patience,
        max_epochs=loop.num_rounds,
        seed=s.seed,
        progress=loop.progress,
        log=log,
        data_name=data_name,
        progress_file=progress_file,
        shared_negatives=s.shared_negatives,
        device=s.device,
        sample_on=s.sample_on,
        regime=s.regime,
        regime_kwargs=s.regime_kwargs,
        sampler=s.sampler,
        sampler_kwargs=s.sampler_kwargs,
    )


def _kge_baseline(
    fed: Any, setting: str, s: Any, a: dict[str, Any], record: dict[str, Any]
) -> PipelineResult:
    r"""Independent or Centralized (:func:`run_kge_baseline`, its
    checkpoints in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="fedgraph-baseline-") as out:
        res = run_kge_baseline(
            fed,
            setting,
            s,
            a["loop"],
            protocol=record["eval_protocol"],
            out=out,
            data_name=record["data"],
            corrupt=a["options"]["corrupt"],
            subsampling=a["options"]["subsampling"],
        )
    return PipelineResult(
        family="kge",
        algorithm=setting,
        metrics=dict(res["weighted"]),
        client_metrics={int(r["client"]): _row(r) for r in res["clients"]},
        history=list(res["history"]),
        rounds=max(r["epochs"] for r in res["clients"]),
        settings=record,
        trained=_baseline_trained(fed, setting, res["trainers"], s.model_kwargs),
    )


def _row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "client"}


def _baseline_trained(
    fed: Any, setting: str, trainers: list[Any], kwargs: Any
) -> dict[int, TrainedKGE]:
    r"""Independent: each client's model (of its trainer) with its names and
    known triples; Centralized: the one model over the union, in global ids."""
    known = ("train", "valid")
    models = [tr.model for tr in trainers]
    reciprocal = trainers[0].regime.reciprocal
    if setting == "centralized":
        union = torch.cat([sh.global_triples(x) for sh in fed.shards for x in known])
        entities = fed.entity_names or [str(i) for i in range(fed.num_entities)]
        relations = fed.relation_names or [str(i) for i in range(fed.num_relations)]
        spec = kge_spec(models[0], kwargs, reciprocal)
        return {0: TrainedKGE(models[0], spec, entities, relations, union)}
    return {
        sh.client_id: TrainedKGE(
            m,
            kge_spec(m, kwargs, reciprocal),
            shard_names(fed.entity_names, sh.entity_ids, sh.graph.entity_names),
            shard_names(fed.relation_names, sh.relation_ids, sh.graph.relation_names),
            sh.graph.all_triples(list(known)),
        )
        for sh, m in zip(fed.shards, models, strict=True)
    }


__all__ = [
    "KGE_BASELINES",
    "run_kge_baseline",
    "DEFAULT_CLIENTS",
    "load_federated_kg",
    "run_kge",
    "kge_algorithm",
    "build_kge_run",
    "corruption_modes",
]
