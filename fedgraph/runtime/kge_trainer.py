r"""Training one knowledge graph: the local step of every federated KGE client,
and the Independent (each client alone) and Centralized (all data pooled)
baselines of FedE ("Single"/"Entire") and FedLU.

Run the baselines with::

    python -m fedgraph.runtime.kge_trainer --data $FEDGRAPH_DATA/fedlu-fb15k-237/R3 \
        --setting independent --model transe --out runs/r3-independent

(see ``--help``; ``--resume`` continues a killed run from its last checkpoint
with identical numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import atomic_torch_save
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.metrics import DIRECTIONS, LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.models.kge import MODES, KGEModel, resolve_model
from fedgraph.models.losses import KGELoss, resolve_loss
from fedgraph.models.sampling import NegativeSampler, subsampling_weights

ExtraLoss = Callable[[KGEModel, Tensor, Tensor, str], Tensor]


def train_epochs(
    model: KGEModel,
    triples: Tensor,
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    loss: KGELoss,
    optimizer: torch.optim.Optimizer,
    sampler: NegativeSampler,
    generator: torch.Generator,
    modes: Sequence[str] = MODES,
    weights: Tensor | None = None,
    extra_loss: ExtraLoss | None = None,
) -> float:
    r"""Trains ``model`` on ``triples`` for ``epochs`` and returns the mean loss.

    Each epoch shuffles the triples (with ``generator``) and, for every batch
    and every corruption mode in ``modes``, takes one optimiser step on

    .. math::
        L = \text{loss}(s^+, s^-, w) + \text{extra\_loss}(\text{model},
        \text{batch}, \text{negatives}, \text{mode})

    (an epoch therefore sees each triple once per mode, like the RotatE /
    FedLU code's alternating head-batch / tail-batch loaders). Federated
    clients call this every round and pass their regulariser (proximal,
    contrastive, distillation) as ``extra_loss``.

    Args:
        model (KGEModel): the model to train (in place).
        triples (Tensor): ``[n, 3]`` training triples.
        epochs (int, optional): passes over ``triples``. (default: 1)
        batch_size (int, optional): positives per step. (default: 1024)
        loss (KGELoss): the loss object.
        optimizer (torch.optim.Optimizer): optimiser over ``model``'s params.
        sampler (NegativeSampler): negative sampler.
        generator (torch.Generator): the only source of randomness.
        modes (Sequence[str], optional): corruption modes per batch.
        weights (Tensor, optional): ``[n]`` per-triple loss weights
            (:func:`~fedgraph.models.sampling.subsampling_weights`).
        extra_loss (Callable, optional): ``f(model, batch, negatives, mode)``.
    """
    model.train()
    total, steps = 0.0, 0
    n = triples.size(0)
    for _ in range(int(epochs)):
        perm = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            idx = perm[start : start + batch_size]
            batch = triples[idx]
            w = None if weights is None else weights[idx]
            for mode in modes:
                neg = sampler.sample(batch, mode, generator)
                pos_score, neg_score = model.score_batch(batch, neg, mode)
                value = loss(pos_score, neg_score, w)
                if extra_loss is not None:
                    value = value + extra_loss(model, batch, neg, mode)
                optimizer.zero_grad(set_to_none=True)
                value.backward()
                optimizer.step()
                total += float(value.detach())
                steps += 1
    return total / max(1, steps)


class KGETrainer:
    r"""Trains and evaluates one KGE model on one :class:`KnowledgeGraph`.

    Evaluates the validation split every ``eval_every`` epochs (filtered,
    ``directions``, candidates and filter as given), keeps the best model by
    validation MRR, stops after ``patience`` evaluations without improvement
    (FedLU: every 5 epochs, patience 3) or ``max_epochs``, and writes a
    checkpoint after every evaluation, from which :meth:`fit` resumes with
    identical numbers (model, optimiser and generator states are saved).

    Args:
        model (KGEModel): the model.
        graph (KnowledgeGraph): the graph; splits ``"train"``, ``"valid"``,
            ``"test"``.
        loss (KGELoss or str, optional): (default: ``"sigmoid-ns"``, FedLU Eq. 7)
        lr (float, optional): Adam learning rate. (default: 1e-4)
        batch_size (int, optional): (default: 1024)
        num_negatives (int, optional): (default: 256)
        shared_negatives (bool, optional): one negative set per batch.
            (default: :obj:`True`)
        subsampling (bool, optional): RotatE/FedLU frequency weights.
            (default: :obj:`True`)
        eval_every (int, optional): epochs between validations. (default: 5)
        patience (int, optional): validations without improvement. (default: 3)
        max_epochs (int, optional): (default: 400, FedLU's ``max_epoch``)
        candidates (Tensor, optional): ``[C]`` entity ids ranked among
            (default: all entities of ``graph``).
        filter_splits (Sequence[str], optional): splits of ``graph`` whose
            triples are filtered. (default: train, valid, test)
        directions (Sequence[str], optional): (default: head and tail)
        seed (int, optional): (default: 0)
        checkpoint (str or Path, optional): checkpoint file.
        progress (bool, optional): tqdm bar over epochs. (default: :obj:`False`)
        log (str, optional): when set, prints one JSON line per evaluation
            tagged with this name. (default: :obj:`None`)
    """

    def __init__(
        self,
        model: KGEModel,
        graph: KnowledgeGraph,
        *,
        loss: KGELoss | str = "sigmoid-ns",
        lr: float = 1e-4,
        batch_size: int = 1024,
        num_negatives: int = 256,
        shared_negatives: bool = True,
        subsampling: bool = True,
        eval_every: int = 5,
        patience: int = 3,
        max_epochs: int = 400,
        candidates: Tensor | None = None,
        filter_splits: Sequence[str] = ("train", "valid", "test"),
        directions: Sequence[str] = DIRECTIONS,
        seed: int = 0,
        checkpoint: str | os.PathLike[str] | None = None,
        progress: bool = False,
        log: str | None = None,
    ) -> None:
        if eval_every <= 0 or patience <= 0 or max_epochs <= 0:
            raise ValueError(
                "`eval_every`, `patience` and `max_epochs` must be positive "
                f"(got {eval_every}, {patience}, {max_epochs})"
            )
        self.model, self.graph = model, graph
        self.loss = resolve_loss(loss) if isinstance(loss, str) else loss
        self.batch_size, self.eval_every = int(batch_size), int(eval_every)
        self.patience, self.max_epochs = int(patience), int(max_epochs)
        self.candidates, self.directions = candidates, tuple(directions)
        self.filter_splits = tuple(filter_splits)
        self.seed, self.progress, self.log = int(seed), bool(progress), log
        self.checkpoint = Path(checkpoint) if checkpoint is not None else None
        self.train_triples = graph.triples("train")
        self.weights = subsampling_weights(self.train_triples) if subsampling else None
        self.sampler = NegativeSampler(
            model.num_entities, num_negatives, shared=shared_negatives
        )
        self.filter = TripleFilter(
            graph.all_triples(self.filter_splits),
            model.num_entities,
            model.num_relations,
        )
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)
        self.generator = torch.Generator().manual_seed(self.seed)
        self.epoch, self.best_mrr, self.bad, self.best_epoch = 0, -1.0, 0, 0
        self.best_state: dict[str, Tensor] | None = None
        self.history: list[dict[str, Any]] = []
        self.train_seconds = 0.0

    def evaluate(self, split: str = "valid") -> LinkPredState:
        r"""Filtered ranking of ``split`` with the trainer's settings."""
        return rank_triples(
            self.model,
            self.graph.triples(split),
            filter=self.filter,
            candidates=self.candidates,
            directions=self.directions,
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "best_mrr": self.best_mrr,
            "best_epoch": self.best_epoch,
            "bad": self.bad,
            "best_state": self.best_state,
            "history": self.history,
            "train_seconds": self.train_seconds,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        for key in ("epoch", "best_mrr", "best_epoch", "bad", "best_state", "history"):
            setattr(self, key, state[key])
        self.train_seconds = state.get("train_seconds", 0.0)

    def _done(self) -> bool:
        return self.bad >= self.patience or self.epoch >= self.max_epochs

    def fit(self, resume: bool = True) -> dict[str, Any]:
        r"""Trains until early stop; returns ``{"best_epoch", "epochs", "history"}``
        and leaves the best model loaded."""
        if resume and self.checkpoint is not None and self.checkpoint.exists():
            self.load_state_dict(torch.load(self.checkpoint, weights_only=False))
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=self.max_epochs, initial=self.epoch, desc="epochs")
        while not self._done():
            t0 = time.perf_counter()
            n_ep = min(self.eval_every, self.max_epochs - self.epoch)
            mean_loss = train_epochs(
                self.model,
                self.train_triples,
                epochs=n_ep,
                batch_size=self.batch_size,
                loss=self.loss,
                optimizer=self.optimizer,
                sampler=self.sampler,
                generator=self.generator,
                weights=self.weights,
            )
            self.train_seconds += time.perf_counter() - t0
            self.epoch += n_ep
            t1 = time.perf_counter()
            metrics = self.evaluate("valid").compute()
            entry = {
                "epoch": self.epoch,
                "loss": mean_loss,
                "valid": metrics,
                "eval_seconds": time.perf_counter() - t1,
            }
            self.history.append(entry)
            if metrics["mrr"] > self.best_mrr:
                self.best_mrr, self.best_epoch, self.bad = metrics["mrr"], self.epoch, 0
                self.best_state = {
                    k: v.clone() for k, v in self.model.state_dict().items()
                }
            else:
                self.bad += 1
            if self.checkpoint is not None:
                atomic_torch_save(self.state_dict(), self.checkpoint)
            if self.log is not None:
                print(json.dumps({"log": self.log, **entry}), flush=True)
            if bar is not None:
                bar.update(n_ep)
                bar.set_postfix(loss=f"{mean_loss:.4f}", mrr=f"{metrics['mrr']:.4f}")
        if bar is not None:
            bar.close()
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        return {
            "best_epoch": self.best_epoch,
            "epochs": self.epoch,
            "history": self.history,
        }


# ------------------------------------------------------------------ baselines
def _load_federated(data: str | os.PathLike[str]) -> Any:
    r"""A :class:`~fedgraph.partition.shard.FederatedKG` from a folder
    (:func:`fedgraph.data.load_federated_folder`) or a registered dataset name
    (:func:`fedgraph.data.load_dataset`, e.g. ``"fedlu-fb15k-237-r3"``)."""
    from fedgraph.data import load_dataset, load_federated_folder

    if Path(data).is_dir():
        return load_federated_folder(data)
    return load_dataset(str(data))


def _centralized_graph(fkg: Any) -> KnowledgeGraph:
    r"""The union of the clients' splits in global ids (duplicates removed)."""
    trip = {}
    for split in ("train", "valid", "test"):
        parts = []
        for shard in fkg:
            t = shard.graph.triples(split)
            parts.append(
                torch.stack(
                    [
                        shard.entity_ids[t[:, 0]],
                        shard.relation_ids[t[:, 1]],
                        shard.entity_ids[t[:, 2]],
                    ],
                    1,
                )
            )
        trip[split] = torch.unique(torch.cat(parts), dim=0)
    return KnowledgeGraph(trip, fkg.num_entities, fkg.num_relations, name="union")


def run_baseline(
    data: str | os.PathLike[str],
    *,
    setting: str = "independent",
    model: str = "transe",
    hidden_channels: int = 256,
    gamma: float = 9.0,
    out: str | os.PathLike[str] = "runs/baseline",
    results: str | os.PathLike[str] | None = None,
    command: str = "",
    **trainer_kwargs: Any,
) -> dict[str, Any]:
    r"""Independent (one :class:`KGETrainer` per client) or Centralized (one on
    the union, tested on each client's test set with that client's entities as
    candidates and its triples as filter). Every client checkpoints under
    ``out``; a rerun resumes. Writes ``results`` (default ``out/results.json``).
    """
    if setting not in ("independent", "centralized"):
        raise ValueError(
            f"`setting` must be 'independent' or 'centralized' (got {setting!r})"
        )
    out = Path(out)
    fkg = _load_federated(data)
    t_start = time.perf_counter()
    states: list[LinkPredState] = []
    history, epochs, secs = [], [], []
    graphs = (
        [s.graph for s in fkg]
        if setting == "independent"
        else [_centralized_graph(fkg)]
    )
    trained: list[KGETrainer] = []
    for i, graph in enumerate(graphs):
        torch.manual_seed(trainer_kwargs.get("seed", 0) + i)
        m = resolve_model(
            model, graph.num_entities, graph.num_relations, hidden_channels, gamma=gamma
        )
        tr = KGETrainer(
            m,
            graph,
            checkpoint=out / f"trainer{i}.pt",
            log=f"{setting}{i}",
            **trainer_kwargs,
        )
        info = tr.fit()
        trained.append(tr)
        history.append(info["history"])
        epochs.append(info["epochs"])
        secs.append(tr.train_seconds / max(1, info["epochs"]))
    n_test = [s.graph.num_triples("test") for s in fkg]
    if setting == "independent":
        states = [tr.evaluate("test") for tr in trained]
    else:
        tr = trained[0]
        for shard in fkg:
            g = shard.graph
            glob = lambda t, s=shard: torch.stack(  # noqa: E731
                [s.entity_ids[t[:, 0]], s.relation_ids[t[:, 1]], s.entity_ids[t[:, 2]]],
                1,
            )
            flt = TripleFilter(
                glob(g.all_triples(("train", "valid", "test"))),
                fkg.num_entities,
                fkg.num_relations,
            )
            states.append(
                rank_triples(
                    tr.model,
                    glob(g.triples("test")),
                    filter=flt,
                    candidates=shard.entity_ids,
                    directions=tr.directions,
                )
            )
    from fedgraph.eval.results import summarize, write_results

    weighted, clients = summarize(states, n_test)
    for i, c in enumerate(clients):
        j = i if setting == "independent" else 0
        c["best_epoch"], c["epochs"] = trained[j].best_epoch, epochs[j]
    t0 = trained[0]
    settings = {
        "setting": setting,
        "data": str(data),
        "model": model,
        "hidden_channels": hidden_channels,
        "gamma": gamma,
        "loss": repr(t0.loss),
        "lr": t0.optimizer.param_groups[0]["lr"],
        "batch_size": t0.batch_size,
        "sampler": repr(t0.sampler),
        "subsampling": t0.weights is not None,
        "eval_every": t0.eval_every,
        "patience": t0.patience,
        "max_epochs": t0.max_epochs,
        "candidates": "client-local entities",
        "filter": "client-local " + "+".join(t0.filter_splits),
        "directions": list(t0.directions),
        "seed": t0.seed,
        "command": command,
        "wall_seconds": time.perf_counter() - t_start,
        "train_seconds": sum(tr.train_seconds for tr in trained),
    }
    path = Path(results) if results is not None else out / "results.json"
    write_results(
        path,
        weighted=weighted,
        clients=clients,
        rounds=max(epochs),
        seconds_per_round=sum(secs),
        settings=settings,
        history=history,
    )
    return {"weighted": weighted, "clients": clients, "path": str(path)}


def main(argv: Sequence[str] | None = None) -> int:
    r"""``python -m fedgraph.runtime.kge_trainer``: the baselines' CLI."""
    p = argparse.ArgumentParser(
        prog="python -m fedgraph.runtime.kge_trainer",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--data", required=True, help="federated dataset folder")
    p.add_argument(
        "--setting", choices=["independent", "centralized"], default="independent"
    )
    p.add_argument("--model", default="transe")
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--gamma", type=float, default=9.0)
    p.add_argument("--loss", default="sigmoid-ns")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument(
        "--per-positive-negatives",
        action="store_true",
        help="K negatives per positive instead of K shared per batch",
    )
    p.add_argument("--no-subsampling", action="store_true")
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--max-epochs", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--out", default="runs/baseline")
    p.add_argument("--results", default=None)
    p.add_argument("--progress", action="store_true")
    a = p.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    res = run_baseline(
        a.data,
        setting=a.setting,
        model=a.model,
        hidden_channels=a.dim,
        gamma=a.gamma,
        out=a.out,
        results=a.results,
        command="python -m fedgraph.runtime.kge_trainer "
        + " ".join(sys.argv[1:] if argv is None else argv),
        loss=a.loss,
        lr=a.lr,
        batch_size=a.batch_size,
        num_negatives=a.num_negatives,
        shared_negatives=not a.per_positive_negatives,
        subsampling=not a.no_subsampling,
        eval_every=a.eval_every,
        patience=a.patience,
        max_epochs=a.max_epochs,
        seed=a.seed,
        progress=a.progress,
    )
    print(json.dumps({"weighted": res["weighted"], "path": res["path"]}, indent=1))
    return 0


__all__ = ["train_epochs", "KGETrainer", "run_baseline", "main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
