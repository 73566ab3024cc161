r"""Training one knowledge graph: the local step of every federated KGE client
(:func:`train_epochs`) and the trainer with validation, early stopping and
checkpoints (:class:`KGETrainer`) that the baselines
(:mod:`fedgraph.runtime.baselines`) run per client.

(``python -m fedgraph.cli.baselines`` is the baselines' CLI.)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import atomic_torch_save, cpu_copy
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.metrics import DIRECTIONS, LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.models.kge import MODES, KGEModel
from fedgraph.models.losses import KGELoss, resolve_loss
from fedgraph.models.memory import TRAINING_COPIES, check_kge_memory
from fedgraph.models.samplers import (
    NegativeSampler,
    build_sampler,
    subsampling_weights,
)
from fedgraph.progress import advance, progress_bar, say, step_line
from fedgraph.training.optimizers import (
    DEFAULT_OPTIMIZER,
    build_optimizer,
    check_optimizer,
)
from fedgraph.training.regimes import (
    NegativeSampling,
    StepContext,
    TrainingRegime,
    resolve_regime,
)
from fedgraph.training.regimes.negative_sampling import SIDED
from fedgraph.training.sample_on import SampleSource, check_sample_on, epoch_batches
from fedgraph.validate import check_integer

ExtraLoss = Callable[[KGEModel, Tensor, Tensor | None, str], Tensor]


def train_epochs(
    model: KGEModel,
    triples: Tensor,
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    loss: KGELoss | None = None,
    optimizer: torch.optim.Optimizer,
    sampler: NegativeSampler | None = None,
    generator: torch.Generator,
    modes: Sequence[str] = MODES,
    weights: Tensor | None = None,
    extra_loss: ExtraLoss | None = None,
    shuffle: bool = True,
    sample_on: str = "host",
    regime: TrainingRegime | None = None,
    labels: TripleFilter | None = None,
) -> float:
    r"""Trains ``model`` on ``triples`` for ``epochs`` and returns the mean loss.

    Each epoch shuffles the triples (with ``generator``) and, for every batch
    and every corruption mode in ``modes``, takes one optimiser step on

    .. math::
        L = \text{loss}(s^+, s^-, w) + \text{extra\_loss}(\text{model},
        \text{batch}, \text{negatives}, \text{mode})

    (an epoch therefore sees each triple once per mode, like the RotatE /
    FedLU code's alternating head-batch / tail-batch loaders). With
    ``sample_on="host"`` batches and negatives are drawn on the CPU (the CPU
    ``generator``: the same random stream on every device) and moved to the
    model's device for scoring, so a model on a GPU trains on exactly the CPU
    run's samples. With ``sample_on="device"``, ``triples``, ``weights`` and
    ``generator`` live on the model's device and everything is drawn there
    (:mod:`fedgraph.training.sample_on`). Federated clients call this every
    round and pass their regulariser (proximal, contrastive, distillation)
    as ``extra_loss``.

    Args:
        model (KGEModel): the model to train (in place).
        triples (Tensor): ``[n, 3]`` training triples.
        epochs (int, optional): passes over ``triples``. (default: 1)
        batch_size (int, optional): positives per step. (default: 1024)
        loss (fedgraph.models.KGELoss): the loss object.
        optimizer (torch.optim.Optimizer): optimiser over ``model``'s params.
        sampler (NegativeSampler): negative sampler.
        generator (torch.Generator): the only source of randomness.
        modes (Sequence[str], optional): corruption modes per batch.
        weights (Tensor, optional): ``[n]`` per-triple loss weights
            (:func:`~fedgraph.models.samplers.subsampling_weights`).
        extra_loss (Callable, optional): ``f(model, batch, negatives, mode)``.
        shuffle (bool, optional): reshuffle every epoch; ``False`` takes the
            batches in the order of ``triples`` every epoch (as FedLU's code,
            which fixes its batch order at start-up). (default: :obj:`True`)
        sample_on (str, optional): ``"host"`` or ``"device"``, where batches
            and negatives are drawn. (default: ``"host"``)
        regime (fedgraph.training.regimes.TrainingRegime, optional): what
            each step scores and its loss (:mod:`fedgraph.training.regimes`;
            ``triples`` and ``weights`` are then its prepared rows,
            :meth:`~fedgraph.training.regimes.TrainingRegime.prepare`).
            ``loss`` and ``sampler`` serve negative sampling only.
            (default: negative sampling)
        labels (TripleFilter, optional): the prepared answers of a k-vs-all
            regime, on the model's device. (default: :obj:`None`)
    """
    total, steps = train_steps(
        model,
        triples,
        epochs=epochs,
        batch_size=batch_size,
        loss=loss,
        optimizer=optimizer,
        sampler=sampler,
        generator=generator,
        modes=modes,
        weights=weights,
        extra_loss=extra_loss,
        shuffle=shuffle,
        sample_on=sample_on,
        regime=regime,
        labels=labels,
    )
    return float(total) / max(1, steps)


def train_steps(
    model: KGEModel,
    triples: Tensor,
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    loss: KGELoss | None = None,
    optimizer: torch.optim.Optimizer,
    sampler: NegativeSampler | None = None,
    generator: torch.Generator,
    modes: Sequence[str] = MODES,
    weights: Tensor | None = None,
    extra_loss: ExtraLoss | None = None,
    shuffle: bool = True,
    sample_on: str = "host",
    regime: TrainingRegime | None = None,
    labels: TripleFilter | None = None,
) -> tuple[Tensor, int]:
    r""":func:`train_epochs` without its final read-back: returns the sum of
    the step losses (a float64 scalar on the model's device) and the number
    of steps. With ``sample_on="device"`` (and no ``extra_loss`` that reads
    a value back) nothing here waits on the device."""
    check_sample_on(sample_on)
    check_integer(batch_size, "batch_size")
    model.train()
    device = model.device
    # the loss sum stays on the device (float64: the same sum as Python floats):
    # no host sync per step, so on a GPU the next batch is drawn while the
    # current step runs
    total = torch.zeros((), dtype=torch.float64, device=device)
    steps = 0
    # on the device the filtered redraw must not read its count back
    options = {"sync_free": True} if sample_on == "device" else {}
    regime = NegativeSampling() if regime is None else regime
    ctx = StepContext(loss, sampler, tuple(modes), generator, options, labels)
    for _ in range(int(epochs)):
        for drawn, batch, w in epoch_batches(
            triples,
            weights,
            batch_size=batch_size,
            generator=generator,
            device=device,
            shuffle=shuffle,
            sample_on=sample_on,
        ):
            for value, neg, mode in regime.steps(model, drawn, batch, w, ctx):
                penalty = regime.regularization(model, batch)
                if penalty is not None:
                    value = value + penalty
                if extra_loss is not None:
                    value = value + _extra(extra_loss, model, batch, neg, mode)
                optimizer.zero_grad(set_to_none=True)
                value.backward()
                optimizer.step()
                total += value.detach().double()
                steps += 1
            advance()  # the open progress bar, if any
    return total, steps


def _extra(
    extra_loss: ExtraLoss,
    model: KGEModel,
    batch: Tensor,
    neg: Tensor | None,
    mode: str,
) -> Tensor:
    r"""``extra_loss`` of one step; refused for a step whose sampler drew a
    side per positive (the loss terms rescore one side's negatives)."""
    if mode == SIDED:
        raise ValueError(
            "loss terms that rescore the negatives (FedLU's distillation, "
            "FedEC's contrast …) need a sampler that corrupts one side per "
            "step: use the uniform sampler"
        )
    return extra_loss(model, batch, neg, mode)


def _check_sizes(
    model: KGEModel,
    batch_size: int,
    num_negatives: int,
    shared: bool,
    device: torch.device | str,
) -> None:
    r"""Refuses a ``batch_size`` or ``num_negatives`` below 1, and a training
    state that would not fit in the memory left: the model's tables exist,
    so their gradients, Adam's moments and one step's negatives."""
    check_kge_memory(
        [(model.num_entities, model.num_relations)],
        model.hidden_channels,
        model=model,
        copies=TRAINING_COPIES - 1,
        batch_size=check_integer(batch_size, "batch_size"),
        num_negatives=check_integer(num_negatives, "num_negatives"),
        shared_negatives=shared,
        device=device,
    )


def _check_schedule(eval_every: int, patience: int, max_epochs: int) -> None:
    if eval_every <= 0 or patience < 0 or max_epochs <= 0:
        raise ValueError(
            "`eval_every` and `max_epochs` must be positive and `patience` >= 0 "
            f"(got {eval_every}, {max_epochs}, {patience})"
        )


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
        loss (fedgraph.models.KGELoss or str, optional): (default: ``"sigmoid-ns"``,
            FedLU Eq. 7)
        lr (float, optional): the optimiser's learning rate. (default: 1e-4)
        optimizer (str, optional): ``"adam"``, ``"adagrad"`` or ``"sgd"``
            (:func:`~fedgraph.training.optimizers.build_optimizer`).
            (default: ``"adam"``)
        batch_size (int, optional): (default: 1024)
        num_negatives (int, optional): (default: 256)
        shared_negatives (bool, optional): one negative set per batch.
            (default: :obj:`True`)
        subsampling (bool, optional): RotatE/FedLU frequency weights.
            (default: :obj:`True`)
        eval_every (int, optional): epochs between validations. (default: 5)
        patience (int, optional): validations without improvement; ``0``:
            never stop early (train ``max_epochs``). (default: 3)
        max_epochs (int, optional): (default: 400, FedLU's ``max_epoch``)
        candidates (Tensor, optional): ``[C]`` entity ids ranked among
            (default: all entities of ``graph``).
        filter_splits (Sequence[str], optional): splits of ``graph`` whose
            triples are filtered. (default: train, valid, test)
        exclude (Tensor, optional): ``[E]`` entity ids masked like filtered
            answers unless one is the target (FedE's protocol: the entities
            outside the training triples). (default: :obj:`None`)
        directions (Sequence[str], optional): (default: head and tail)
        modes (Sequence[str], optional): corruption modes of training, one
            optimiser step each per batch (FedE's code: tail-batch only).
            (default: head-batch and tail-batch)
        seed (int, optional): (default: 0)
        checkpoint (str or Path, optional): checkpoint file.
        progress (bool, optional): tqdm bar over epochs. (default: :obj:`False`)
        log (str, optional): when set, prints one line per evaluation
            (:func:`fedgraph.progress.step_line`) naming what trained
            (e.g. ``"client 0"``; ``""``: nothing). (default: :obj:`None`)
        shuffle (bool, optional): reshuffle the training triples every epoch
            (``False``: the order of ``graph``'s training split, every epoch).
            (default: :obj:`True`)
        device (torch.device or str, optional): where the model trains and
            ranks; with ``sample_on="host"`` samples are drawn on the CPU
            (:func:`train_epochs`), so the run is the CPU run up to float
            rounding. (default: ``"cpu"``)
        sample_on (str, optional): ``"host"`` or ``"device"``: where batches
            and negatives are drawn (:mod:`fedgraph.training.sample_on`;
            ``"device"``: from a generator on ``device`` seeded from ``seed``,
            its state saved in the checkpoint). (default: ``"host"``)
        validate (callable, optional): ``validate(trainer)`` returns the
            :class:`LinkPredState` whose MRR early stopping reads (the
            Centralized baseline under FedE's protocol ranks each client's
            validation triples among that client's candidates). (default:
            :meth:`evaluate` of ``"valid"``)
        record (Mapping[str, Any], optional): the run's settings, stored in
            every checkpoint as ``"settings"`` (what ``fedgraph train
            --resume`` compares a command with). (default: :obj:`None`)
        regime (fedgraph.training.regimes.TrainingRegime or str, optional):
            the training regime
            (:mod:`fedgraph.training.regimes`: ``"negative-sampling"``,
            ``"1vsall"``, ``"kvsall"``); with reciprocal relations the
            model gets its inverse relations
            (:meth:`~fedgraph.training.regimes.TrainingRegime.adapt`) and
            evaluation ranks heads through them. (default: negative sampling,
            with ``loss``, ``num_negatives`` and ``modes``)
        regime_kwargs (Mapping[str, Any], optional): the regime's settings
            when ``regime`` is a name. (default: :obj:`None`)
        sampler (str, optional): the negative sampler
            (:mod:`fedgraph.models.samplers`), built on the graph's training
            triples. (default: ``"uniform"``)
        sampler_kwargs (Mapping[str, Any], optional): its own arguments.
            (default: :obj:`None`)
        on_eval (callable, optional): ``on_eval(trainer)`` after every
            evaluation, once its entry is in :attr:`history` and the
            checkpoint is written (the baselines rewrite ``progress.json``).
            (default: :obj:`None`)
    """

    def __init__(
        self,
        model: KGEModel,
        graph: KnowledgeGraph,
        *,
        loss: KGELoss | str = "sigmoid-ns",
        lr: float = 1e-4,
        optimizer: str = DEFAULT_OPTIMIZER,
        batch_size: int = 1024,
        num_negatives: int = 256,
        shared_negatives: bool = True,
        subsampling: bool = True,
        eval_every: int = 5,
        patience: int = 3,
        max_epochs: int = 400,
        candidates: Tensor | None = None,
        filter_splits: Sequence[str] = ("train", "valid", "test"),
        exclude: Tensor | None = None,
        directions: Sequence[str] = DIRECTIONS,
        modes: Sequence[str] = MODES,
        seed: int = 0,
        checkpoint: str | os.PathLike[str] | None = None,
        progress: bool = False,
        log: str | None = None,
        shuffle: bool = True,
        device: torch.device | str = "cpu",
        sample_on: str = "host",
        validate: Callable[[KGETrainer], LinkPredState] | None = None,
        record: Mapping[str, Any] | None = None,
        regime: TrainingRegime | str | None = None,
        regime_kwargs: Mapping[str, Any] | None = None,
        sampler: str = "uniform",
        sampler_kwargs: Mapping[str, Any] | None = None,
        on_eval: Callable[[KGETrainer], None] | None = None,
    ) -> None:
        _check_schedule(eval_every, patience, max_epochs)
        _check_sizes(model, batch_size, num_negatives, shared_negatives, device)
        self.device = torch.device(device)
        self.regime = resolve_regime(regime, **dict(regime_kwargs or {}))
        model = self.regime.adapt(model, graph.num_relations)
        self.model, self.graph = model.to(self.device), graph
        self.loss = resolve_loss(loss) if isinstance(loss, str) else loss
        self.batch_size, self.eval_every = int(batch_size), int(eval_every)
        self.patience, self.max_epochs = int(patience), int(max_epochs)
        self.candidates, self.directions = candidates, tuple(directions)
        self.filter_splits, self.modes = tuple(filter_splits), tuple(modes)
        self.exclude, self.validate, self.on_eval = exclude, validate, on_eval
        self.seed, self.progress, self.log = int(seed), bool(progress), log
        self.shuffle, self.train_seconds = bool(shuffle), 0.0
        self.record = None if record is None else dict(record)
        self.checkpoint = Path(checkpoint) if checkpoint is not None else None
        self._prepare(subsampling)
        self._use_sampler(sampler, sampler_kwargs, num_negatives, shared_negatives)
        self.optimizer_name = check_optimizer(optimizer)
        self.optimizer = build_optimizer(self.optimizer_name, model.parameters(), lr)
        self.generator = torch.Generator().manual_seed(self.seed)
        self.samples = SampleSource(sample_on, self.device, self.seed)
        self.epoch, self.best_mrr, self.bad, self.best_epoch = 0, -1.0, 0, 0
        self.best_state: dict[str, Tensor] | None = None
        self.history: list[dict[str, Any]] = []

    def _prepare(self, subsampling: bool) -> None:
        r"""The training triples, their weights, the regime's rows and the
        evaluation filter."""
        self.filter = TripleFilter(
            self.graph.all_triples(self.filter_splits),
            self.model.num_entities,
            self.model.num_relations,
        ).to(self.device)
        self.train_triples = self.graph.triples("train")
        triples = self.train_triples
        self.weights = subsampling_weights(triples) if subsampling else None
        self.data = self.regime.prepare(
            triples, self.weights, self.model.num_entities, self.graph.num_relations
        )
        labels = self.data.labels
        self.labels = None if labels is None else labels.to(self.device)

    def _use_sampler(
        self,
        sampler: str,
        sampler_kwargs: Mapping[str, Any] | None,
        num_negatives: int,
        shared: bool,
    ) -> None:
        r"""Builds the negative sampler on the graph's training triples
        (:func:`~fedgraph.models.samplers.build_sampler`)."""
        self.sampler = build_sampler(
            sampler,
            sampler_kwargs,
            self.model.num_entities,
            num_negatives,
            shared=shared,
            triples=self.train_triples,
            num_relations=self.graph.num_relations,
        )

    def evaluate(self, split: str = "valid") -> LinkPredState:
        r"""Filtered ranking of ``split`` with the trainer's settings."""
        return rank_triples(
            self.scorer,
            self.graph.triples(split),
            filter=self.filter,
            candidates=self.candidates,
            directions=self.directions,
            exclude=self.exclude,
        )

    def state_dict(self) -> dict[str, Any]:
        r"""The trainer's state as CPU tensors (a checkpoint written on a GPU
        resumes on a CPU and the other way round)."""
        return {
            "epoch": self.epoch,
            "model": cpu_copy(self.model.state_dict()),
            "optimizer": cpu_copy(self.optimizer.state_dict()),
            "generator": self.generator.get_state(),
            "best_mrr": self.best_mrr,
            "best_epoch": self.best_epoch,
            "bad": self.bad,
            "best_state": self.best_state,
            "history": self.history,
            "train_seconds": self.train_seconds,
            **self.samples.state_dict(),
            **({} if self.record is None else {"settings": self.record}),
        }

    @property
    def sample_on(self) -> str:
        r"""``"host"`` or ``"device"``: where the samples are drawn."""
        return self.samples.sample_on

    @property
    def scorer(self) -> Any:
        r"""What evaluation ranks with: the model, or with reciprocal
        relations its :class:`~fedgraph.training.regimes.ReciprocalScorer`
        over the graph's relations."""
        return self.regime.scorer(self.model, self.graph.num_relations)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.samples.load_state_dict(state, "KGETrainer")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        for key in ("epoch", "best_mrr", "best_epoch", "bad", "best_state", "history"):
            setattr(self, key, state[key])
        self.train_seconds = state.get("train_seconds", 0.0)

    def _train(self, epochs: int) -> float:
        r"""``epochs`` of :func:`train_epochs`; the mean loss."""
        triples, weights, generator = self.samples(
            self.data.items, self.data.weights, self.generator
        )
        return train_epochs(
            self.model,
            triples,
            weights=weights,
            generator=generator,
            epochs=epochs,
            batch_size=self.batch_size,
            loss=self.loss,
            optimizer=self.optimizer,
            sampler=self.sampler,
            modes=self.modes,
            shuffle=self.shuffle,
            sample_on=self.sample_on,
            regime=self.regime,
            labels=self.labels,
        )

    def _train_shown(self, n_ep: int) -> float:
        r"""``n_ep`` epochs under a bar of batches (a federated round's inner
        bar, the same); the mean loss, refused unless finite."""
        with progress_bar(
            f"epoch {self.epoch + n_ep}: training", unit="batch", enabled=self.progress
        ):
            mean_loss = self._train(n_ep)
        if not math.isfinite(mean_loss):
            self._diverged(mean_loss, n_ep)
        return mean_loss

    def _diverged(self, mean_loss: float, n_ep: int) -> None:
        # Stops before the epochs' state reaches the checkpoint or the
        # history: a NaN model would rank every triple alike and early stopping
        # would report the last finite model as if the run had converged.
        from fedgraph.errors import DivergedError

        kept = (
            f"; {self.checkpoint} still holds epoch {self.epoch}"
            if self.checkpoint is not None and self.checkpoint.exists()
            else ""
        )
        raise DivergedError(
            f"training diverged in epochs {self.epoch + 1}-{self.epoch + n_ep}"
            f"{f' ({self.log})' if self.log else ''}: the mean loss is "
            f"{mean_loss}{kept}; lower the learning rate (`--lr`) or check the "
            "data, then train again"
        )

    def _done(self) -> bool:
        stalled = self.patience > 0 and self.bad >= self.patience
        return stalled or self.epoch >= self.max_epochs

    def fit(self, resume: bool = True) -> dict[str, Any]:
        r"""Trains until early stop; returns ``{"best_epoch", "epochs", "history"}``
        and leaves the best model loaded."""
        if resume and self.checkpoint is not None and self.checkpoint.exists():
            from fedgraph.data.checkpoint import load_checkpoint

            self.load_state_dict(load_checkpoint(self.checkpoint, keys=("model",)))
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(
                total=self.max_epochs,
                initial=self.epoch,
                desc="epochs",
                dynamic_ncols=True,
            )
        while not self._done():
            t0 = time.perf_counter()
            n_ep = min(self.eval_every, self.max_epochs - self.epoch)
            mean_loss = self._train_shown(n_ep)
            self.train_seconds += time.perf_counter() - t0
            self.epoch += n_ep
            t1 = time.perf_counter()
            state = (
                self.evaluate("valid") if self.validate is None else self.validate(self)
            )
            metrics = state.compute()
            entry = {
                "epoch": self.epoch,
                "loss": mean_loss,
                "valid": metrics,
                "eval_seconds": time.perf_counter() - t1,
            }
            self.history.append(entry)
            if metrics["mrr"] > self.best_mrr:
                self.best_mrr, self.best_epoch, self.bad = metrics["mrr"], self.epoch, 0
                self.best_state = cpu_copy(self.model.state_dict())
            else:
                self.bad += 1
            if self.checkpoint is not None:
                atomic_torch_save(self.state_dict(), self.checkpoint)
            if self.on_eval is not None:
                self.on_eval(self)
            if self.log is not None:  # one line, as every training command
                line = {**entry, "train_seconds": t1 - t0}
                say(step_line(line, step="epoch", of=self.max_epochs, who=self.log))
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


__all__ = ["train_epochs", "train_steps", "KGETrainer", "ExtraLoss"]
