r"""The R-GCN and text families of :func:`~fedgraph.pipeline`: an R-GCN
method on an RDF graph partitioned by node type (FedAlign's protocol), and a
FedMKGC setting on a multilingual KG, one client per language."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import torch

from fedgraph.runtime.loop import LoopSettings
from fedgraph.runtime.pipeline_result import PipelineResult, from_simulation
from fedgraph.runtime.pipeline_settings import training_settings
from fedgraph.runtime.predict import TrainedRGCN


def load_federated_rdf(
    dataset: Any, partition: Any, kwargs: dict[str, Any], seed: int, root: Any
) -> Any:
    r"""The :class:`~fedgraph.partition.rdf_shard.FederatedRDF` of
    ``dataset`` and ``partition``, drawn as ``fedgraph train --model rgcn``
    draws it."""
    from fedgraph.data.rdf_entities import load_rdf
    from fedgraph.partition import resolve_partitioner
    from fedgraph.partition.rdf_shard import FederatedRDF

    torch.manual_seed(seed)
    if isinstance(partition, FederatedRDF):
        return partition
    if isinstance(partition, (str, os.PathLike)) and os.path.isdir(partition):
        return FederatedRDF.load(partition)
    if isinstance(dataset, (str, os.PathLike)) and os.path.isdir(dataset):
        return FederatedRDF.load(dataset)
    graph = (
        load_rdf(dataset, root) if isinstance(dataset, (str, os.PathLike)) else dataset
    )
    torch.manual_seed(seed)
    if partition is None:
        partition, kwargs = "rdf-type", {"num_clients": 10, "num_types": 6, **kwargs}
    if isinstance(partition, str):
        partition = resolve_partitioner(partition, **{"seed": seed, **kwargs})
    return partition(graph)


def run_rgcn(**a: Any) -> PipelineResult:
    from fedgraph.federated import algorithms as registry
    from fedgraph.federated.rgcn.setup import RGCNSettings, loop_kwargs
    from fedgraph.runtime.pipeline_run import run_pipeline_loop

    loop: LoopSettings = a["loop"]
    common = training_settings(RGCNSettings, a["training"], a["seed"])
    alg = registry.get(a["algorithm"], "rgcn")
    own = alg.parse(a["algorithm_kwargs"])
    fed = load_federated_rdf(
        a["dataset"], a["partition"], a["partition_kwargs"], a["seed"], a["root"]
    )
    strategy, clients = alg.build(fed, common, own)
    protocol = LoopSettings(  # FedAlign's: the test accuracy every round
        **loop_kwargs(loop.num_rounds, a["seed"]),
        progress=loop.progress,
        stop_after=loop.stop_after,
    )
    record = {
        "data": str(a["dataset"]) if a["dataset"] is not None else str(a["partition"]),
        "model": "rgcn",
        "training": dataclasses.asdict(common),
        "extra": dataclasses.asdict(own),
        "num_rounds": loop.num_rounds,
        "num_clients": fed.num_clients,
        "strategy_params": strategy.get_params(),
    }
    res = run_pipeline_loop(strategy, clients, protocol, record, a["options"]["folder"])
    if res.rounds == loop.num_rounds:  # FedAlign's protocol: the last round's
        last = res.history[-1]
        res.test, res.test_clients = dict(last["test"]), dict(last["test_clients"])
    return from_simulation(
        "rgcn", alg.name, res, record, _rgcn_trained(fed, clients, common)
    )


def _rgcn_trained(fed: Any, clients: Mapping[int, Any], common: Any) -> dict:
    r"""Each R-GCN client's model (the global bases of the last round's test
    synchronised in) with its graph and names."""
    out = {}
    for c, client in clients.items():
        shard = client.shard
        spec = {
            "num_nodes": shard.num_nodes,
            "num_relations": 2 * fed.num_relations,
            "num_classes": fed.num_classes,
            "hidden_channels": common.hidden_channels,
            "num_bases": common.num_bases,
        }
        out[c] = TrainedRGCN(
            client.model,
            spec,
            client.edge_index,
            client.edge_type,
            list(shard.graph.node_names),
            list(shard.graph.class_names),
        )
    return out


def run_text(**a: Any) -> PipelineResult:
    from fedgraph.federated import algorithms as registry
    from fedgraph.federated.text.setup import (
        MKGCSettings,
        default_encoder,
        load_text_model,
    )
    from fedgraph.runtime.fedmkgc_runner import load_language_graphs
    from fedgraph.runtime.pipeline_run import resumable_loop, run_pipeline_loop

    kwargs = dict(a["model_kwargs"])
    encoder_name = kwargs.pop("encoder", None) or default_encoder()
    if kwargs:
        raise ValueError(
            "`model_kwargs` of the text model takes `encoder` only (got "
            f"{sorted(kwargs)})"
        )
    settings = training_settings(MKGCSettings, a["training"], a["seed"])
    languages = a["partition_kwargs"].pop("languages", None)
    if a["partition"] is not None or a["partition_kwargs"]:
        raise ValueError(
            "the text family has one client per language: give "
            "`partition_kwargs={'languages': [...]}` only"
        )
    graphs = load_language_graphs(
        a["dataset"], languages, a["root"], what=("`dataset`", "`languages`")
    )
    encoder, tokenizer = load_text_model(encoder_name, "`model_kwargs['encoder']`")
    alg = registry.get(a["algorithm"], "text")
    strategy, clients = alg.build(
        list(graphs.values()),
        encoder,
        tokenizer,
        settings,
        alg.parse(a["algorithm_kwargs"]),
    )
    loop = dataclasses.replace(a["loop"], monitor="mrr")
    record = {
        "data": str(a["dataset"]),
        "model": "text",
        "encoder": str(encoder_name),
        "client_languages": list(graphs),
        "training": settings.to_dict(),
        "loop": resumable_loop(loop),
        "strategy_params": strategy.get_params(),
    }
    res = run_pipeline_loop(strategy, clients, loop, record, a["options"]["folder"])
    return from_simulation("text", alg.name, res, record, {})


__all__ = ["load_federated_rdf", "run_rgcn", "run_text"]
