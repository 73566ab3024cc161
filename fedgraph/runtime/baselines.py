r"""The Independent (each client alone) and Centralized (all data pooled)
baselines of FedE ("Single"/"Entire") and FedLU, on :class:`KGETrainer`.

Run them with ``fedgraph train DATASET --algorithm independent|centralized``,
or with::

    python -m fedgraph.cli.baselines --data $FEDGRAPH_DATA/fedlu-fb15k-237/R3 \
        --setting independent --model transe --out runs/r3-independent

(see ``--help``; rerunning the same command continues a killed run from its
last checkpoints with identical numbers).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.protocol import EvalProtocol, resolve_protocol
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.models.kge import models, resolve_model
from fedgraph.training.kge_trainer import KGETrainer


def _load_federated(data: str | os.PathLike[str]) -> Any:
    r"""A :class:`~fedgraph.data.shard.FederatedKG` from a folder
    (:func:`fedgraph.data.load_federated_folder`) or a registered dataset name
    (:func:`fedgraph.data.load_dataset`, e.g. ``"fedlu-fb15k-237-r3"``)."""
    from fedgraph.data import load_dataset, load_federated_folder

    if isinstance(data, KnowledgeGraph):  # one KG with its own splits
        return one_client_federation(data)
    if not isinstance(data, (str, os.PathLike)):  # already loaded
        return data
    if Path(data).is_dir() and not (Path(data) / "train.txt").is_file():
        return load_federated_folder(data)
    loaded = load_dataset(Path(data) if Path(data).is_dir() else str(data))
    return (
        one_client_federation(loaded) if isinstance(loaded, KnowledgeGraph) else loaded
    )


def one_client_federation(graph: KnowledgeGraph) -> Any:
    r"""``graph`` as a federation of one client holding all of it, ids
    unchanged and its own train / valid / test kept: what Centralized and
    Independent train on when given one KG (a folder of ``train.txt``,
    ``valid.txt``, ``test.txt`` or a registered KG such as ``"nations"``)."""
    from fedgraph.data.shard import FederatedKG, KGShard

    shard = KGShard(
        0,
        graph,
        torch.arange(graph.num_entities),
        torch.arange(graph.num_relations),
    )
    return FederatedKG(
        [shard],
        graph.num_entities,
        graph.num_relations,
        entity_names=getattr(graph, "entity_names", None),
        relation_names=getattr(graph, "relation_names", None),
        meta={"source": graph.name or "one KG", "keep_splits": True},
    )


def _centralized_graph(fkg: Any) -> KnowledgeGraph:
    r"""The union of the clients' splits in global ids (duplicates removed)."""
    trip = {
        split: torch.unique(
            torch.cat([shard.global_triples(split) for shard in fkg]), dim=0
        )
        for split in ("train", "valid", "test")
    }
    return KnowledgeGraph(trip, fkg.num_entities, fkg.num_relations, name="union")


def _client_excluded(shard: Any, protocol: EvalProtocol) -> torch.Tensor | None:
    r"""Global ids of ``shard``'s entities outside its candidate set under
    ``protocol`` (:obj:`None`: none)."""
    local = protocol.excluded_ids(shard.graph)
    return None if local is None else shard.entity_ids[local]


def _check_setting(setting: str) -> None:
    if setting not in ("independent", "centralized"):
        raise ValueError(
            f"`setting` must be 'independent' or 'centralized' (got {setting!r})"
        )


def _graphs(fkg: Any, setting: str) -> list[KnowledgeGraph]:
    r"""The graphs trained: each client's (Independent) or their union
    (Centralized)."""
    if setting == "independent":
        return [s.graph for s in fkg]
    return [_centralized_graph(fkg)]


def run_baseline(
    data: str | os.PathLike[str],
    *,
    setting: str = "independent",
    model: str = "transe",
    model_kwargs: dict[str, Any] | None = None,
    hidden_channels: int = 256,
    gamma: float = 9.0,
    out: str | os.PathLike[str] = "runs/baseline",
    results: str | os.PathLike[str] | None = None,
    command: str = "",
    protocol: str | EvalProtocol = "fedlu",
    log: bool = True,
    data_name: str | None = None,
    progress_file: str | os.PathLike[str] | None = None,
    **trainer_kwargs: Any,
) -> dict[str, Any]:
    r"""Independent (one :class:`KGETrainer` per client) or Centralized (one on
    the union, tested on each client's test set with that client's
    candidates and its triples as filter). ``protocol``
    (:mod:`fedgraph.eval.protocol`) names the ranked directions and the
    candidate set (FedLU's: head and tail among the client's entities;
    FedE's: tails among the client's training entities). Every client
    checkpoints under ``out``; a rerun resumes. Writes ``results`` (default
    ``out/results.json``). ``log``: print one line per validation
    (:func:`fedgraph.progress.step_line`). ``data_name``: the
    data as recorded in the results (default: ``str(data)``; give the name or
    folder when ``data`` is an already loaded federation). ``progress_file``:
    rewritten at every validation with ``trainer_kwargs["record"]`` and each
    graph's validation history so far (``results.json``'s ``history``).
    """
    protocol = resolve_protocol(protocol)
    _check_setting(setting)
    out = Path(out)
    fkg = _load_federated(data)
    t_start = time.perf_counter()
    graphs = _graphs(fkg, setting)
    spec = (model, hidden_channels, gamma, models.check_kwargs(model, model_kwargs))
    ranking = _ClientRanking(fkg, protocol) if setting == "centralized" else None
    if ranking is not None and protocol.centralized_validation == "per-client":
        trainer_kwargs = {**trainer_kwargs, "validate": ranking.pooled_valid}
    trained, history, epochs, secs = _train_each(
        graphs, setting, spec, out, protocol, log, trainer_kwargs, progress_file
    )
    if ranking is None:
        states = [tr.evaluate("test") for tr in trained]
    else:
        states = ranking(trained[0], "test")
    from fedgraph.eval.results import summarize, write_results

    weighted, clients = summarize(states, [s.graph.num_triples("test") for s in fkg])
    for i, c in enumerate(clients):
        j = i if setting == "independent" else 0
        c["best_epoch"], c["epochs"] = trained[j].best_epoch, epochs[j]
    settings = {
        "setting": setting,
        "data": str(data) if data_name is None else data_name,
        "model": model,
        **dict(model_kwargs=spec[3], hidden_channels=hidden_channels, gamma=gamma),
        **_trainer_settings(trained[0], protocol, setting),
        "command": command,
        **_seconds(trained, history, t_start),
    }
    path = write_results(
        Path(results) if results is not None else out / "results.json",
        weighted=weighted,
        clients=clients,
        rounds=max(epochs),
        seconds_per_round=sum(secs),
        settings=settings,
        history=history,
    )
    res = {"weighted": weighted, "clients": clients, "path": str(path)}
    return {**res, "history": history, "trainers": trained}


def _progress_writer(
    path: str | os.PathLike[str], settings: dict[str, Any], trained: list[KGETrainer]
) -> Callable[[KGETrainer], None]:
    r"""The trainers' ``on_eval``: ``path`` rewritten with ``settings`` and
    the validation history of each graph so far, those in ``trained`` (the
    graphs done, which train one after another) and then the one evaluated."""
    from fedgraph.data.io import atomic_write_json

    def on_eval(trainer: KGETrainer) -> None:
        history = [tr.history for tr in trained] + [trainer.history]
        doc = {"settings": settings, "history": history}
        atomic_write_json(path, doc, default=float)

    return on_eval


def build_trainer(
    graph: KnowledgeGraph,
    index: int,
    spec: tuple[str, int, float, dict[str, Any]],
    protocol: EvalProtocol,
    **trainer_kwargs: Any,
) -> KGETrainer:
    r"""The :class:`KGETrainer` of graph ``index`` of a baseline run (client
    ``index`` for Independent): its model (``spec``: name, width, margin,
    the model's own keyword arguments)
    initialised from seed ``trainer_kwargs["seed"] + index``, evaluated under
    ``protocol``; ``trainer_kwargs`` (checkpoint, loss, ...) go to the
    trainer."""
    model, hidden_channels, gamma, model_kwargs = spec
    torch.manual_seed(trainer_kwargs.get("seed", 0) + index)
    m = resolve_model(
        model,
        graph.num_entities,
        graph.num_relations,
        hidden_channels,
        gamma=gamma,
        **model_kwargs,
    )
    return KGETrainer(
        m,
        graph,
        exclude=protocol.excluded_ids(graph),
        directions=protocol.directions,
        **trainer_kwargs,
    )


def _train_each(
    graphs: Sequence[KnowledgeGraph],
    setting: str,
    spec: tuple[str, int, float, dict[str, Any]],
    out: Path,
    protocol: EvalProtocol,
    log: bool,
    trainer_kwargs: dict[str, Any],
    progress_file: str | os.PathLike[str] | None = None,
) -> tuple[list[KGETrainer], list[Any], list[int], list[float]]:
    r"""Trains (or resumes) one model per graph, checkpointing graph ``i``
    under ``out/trainer{i}.pt``, evaluated under ``protocol`` (``spec``:
    model name, width and margin), each validation recorded in
    ``progress_file`` (:func:`_progress_writer`). Returns the trainers, each
    one's history, epochs and seconds per epoch."""
    trained: list[KGETrainer] = []
    on_eval = None
    if progress_file is not None:
        record = dict(trainer_kwargs.get("record") or {})
        on_eval = _progress_writer(progress_file, record, trained)
    history, epochs, secs = [], [], []
    for i, graph in enumerate(graphs):
        tr = build_trainer(
            graph,
            i,
            spec,
            protocol,
            checkpoint=out / f"trainer{i}.pt",
            log=(f"client {i}" if setting == "independent" else setting)
            if log
            else None,
            on_eval=on_eval,
            **trainer_kwargs,
        )
        info = tr.fit()
        trained.append(tr)
        history.append(info["history"])
        epochs.append(info["epochs"])
        secs.append(tr.train_seconds / max(1, info["epochs"]))
    return trained, history, epochs, secs


class _ClientRanking:
    r"""Ranks a model over the union (global ids) on each client's triples of
    a split, among that client's candidates under ``protocol``, with the
    client's triples as filter: the Centralized baseline's test pass, and its
    validation under a ``"per-client"`` protocol. The filters are built once."""

    def __init__(self, fkg: Any, protocol: EvalProtocol) -> None:
        self.clients = []
        for shard in fkg:
            splits = {k: shard.global_triples(k) for k in ("train", "valid", "test")}
            flt = TripleFilter(
                torch.cat(list(splits.values())), fkg.num_entities, fkg.num_relations
            )
            self.clients.append(
                (splits, flt, shard.entity_ids, _client_excluded(shard, protocol))
            )

    def __call__(self, tr: KGETrainer, split: str = "test") -> list[LinkPredState]:
        r"""One state per client: ``tr``'s model ranking the client's ``split``."""
        return [
            rank_triples(
                tr.scorer,
                splits[split],
                filter=flt,
                candidates=cand,
                directions=tr.directions,
                exclude=excl,
            )
            for splits, flt, cand, excl in self.clients
        ]

    def pooled_valid(self, tr: KGETrainer) -> LinkPredState:
        r"""The clients' validation ranks pooled (FedE's ``evaluate_multi``):
        the state :class:`KGETrainer` early-stops on."""
        return LinkPredState.merged(self(tr, "valid"))


def _seconds(
    trained: Sequence[KGETrainer], history: Sequence[Any], t_start: float
) -> dict[str, float]:
    r"""A resumed run spans several calls: the sums over its checkpointed
    history, and this call's own wall time."""
    return {
        "wall_seconds_this_call": time.perf_counter() - t_start,
        "train_seconds": sum(tr.train_seconds for tr in trained),
        "eval_seconds": sum(e["eval_seconds"] for h in history for e in h),
    }


def _trainer_settings(
    t0: KGETrainer, protocol: EvalProtocol, setting: str
) -> dict[str, Any]:
    r"""The training and evaluation options of ``t0`` as results settings."""
    return {
        "loss": repr(t0.loss),
        "lr": t0.optimizer.param_groups[0]["lr"],
        "optimizer": t0.optimizer_name,
        "batch_size": t0.batch_size,
        "sampler": repr(t0.sampler),
        "regime": {"name": t0.regime.name, **t0.regime.settings()},
        "subsampling": t0.weights is not None,
        "eval_every": t0.eval_every,
        "patience": t0.patience,
        "max_epochs": t0.max_epochs,
        "candidates": "client-local "
        + ("entities" if protocol.candidates == "entities" else "training entities"),
        "filter": "client-local " + "+".join(t0.filter_splits),
        "directions": list(t0.directions),
        "modes": list(t0.modes),
        "protocol": {**protocol.to_dict(), "model_scored": f"the {setting} model"},
        "seed": t0.seed,
        "device": str(t0.device),
        "sample_on": t0.sample_on,
    }


__all__ = ["run_baseline", "build_trainer"]
