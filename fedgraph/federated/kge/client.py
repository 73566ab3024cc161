r"""A federated knowledge-graph-embedding client over one :class:`KGShard`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import cpu_copy
from fedgraph.data.shard import KGShard
from fedgraph.eval.metrics import DIRECTIONS, LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.federated.base import Client
from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.loss_terms import active_terms
from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.models.kge import MODES, KGEModel
from fedgraph.models.losses import KGELoss, resolve_loss
from fedgraph.models.samplers import build_sampler, subsampling_weights
from fedgraph.training.kge_trainer import train_epochs
from fedgraph.training.optimizers import (
    DEFAULT_OPTIMIZER,
    build_optimizer,
    check_optimizer,
)
from fedgraph.training.regimes import TrainingData, TrainingRegime, resolve_regime
from fedgraph.training.sample_on import SampleSource


def _shard_filter(shard: KGShard, model: KGEModel) -> TripleFilter:
    r"""The filter of a client's ranking: the shard's train, valid and test
    triples (those it has), over ``model``'s entities and relations."""
    splits = [s for s in ("train", "valid", "test") if s in shard.graph.split_names]
    return TripleFilter(
        shard.graph.all_triples(splits), model.num_entities, model.num_relations
    )


class KGEClient(Client):
    r"""A client that trains a KGE model on its own shard.

    It registers the global ids of its entities once, then each round
    overwrites its entity rows with the received global rows, trains
    ``local_epochs`` epochs (:func:`~fedgraph.training.kge_trainer.train_epochs`,
    both corruption modes, FedLU Eq. 7 loss by default) plus the regulariser the
    terms the strategy's ``config`` switches on (the loss-term hook,
    :mod:`fedgraph.federated.loss_terms`), and replies with its
    entity rows keyed by global id. Its triples, relation names and relation
    embeddings never leave it.

    Evaluation is filtered ranking of heads and tails among the client's own
    entities, filtered by the client's own train + valid + test triples
    (FedLU's protocol; :meth:`use_protocol` selects another, e.g. FedE's:
    tails only, among the client's training entities), with the client's
    current table or, if the payload carries ``arrays["entity"]``, with
    those rows (the server's aggregated rows, as FedE's code scores).

    Args:
        shard (KGShard): the client's data (local ids).
        model (KGEModel): a model over the shard's local entities/relations.
        loss (fedgraph.models.KGELoss or str, optional): (default: ``"sigmoid-ns"``)
        lr (float, optional): the optimiser's learning rate.
            (default: :obj:`1e-4`)
        optimizer (str, optional): ``"adam"``, ``"adagrad"`` or ``"sgd"``
            (:func:`~fedgraph.training.optimizers.build_optimizer`), new at
            every round with ``reset_optimizer``. (default: :obj:`"adam"`)
        batch_size (int, optional): (default: :obj:`1024`)
        num_negatives (int, optional): (default: :obj:`256`)
        local_epochs (int, optional): epochs per round. (default: :obj:`3`)
        shared_negatives (bool, optional): one negative set per batch (fast
            candidate-matrix scoring). (default: :obj:`True`)
        subsampling (bool, optional): RotatE/FedLU frequency weights.
            (default: :obj:`True`)
        reset_optimizer (bool, optional): a fresh Adam each round, as FedLU's
            code does when the global rows replace the local ones.
            (default: :obj:`True`)
        modes (Sequence[str], optional): corruption modes, one optimiser step
            each per batch. (default: head-batch and tail-batch)
        directions (Sequence[str], optional): ranked directions.
        exclude (Tensor, optional): ``[E]`` local entity ids outside the
            candidate set (masked like filtered answers unless one is the
            target; default: :obj:`None`, every entity of the client is a
            candidate); see :meth:`use_protocol`.
        eval_batch_size (int, optional): queries per scoring chunk.
        seed (int, optional): seed of the client's generator. (default: :obj:`0`)
        device (torch.device or str, optional): where the model trains and
            ranks (e.g. ``"cuda"``). With ``sample_on="host"`` batches and
            negatives are still drawn on the CPU from the client's generator
            (the same samples on every device); payloads and
            :meth:`state_dict` are CPU tensors, so a run checkpointed on a GPU
            resumes on a CPU and vice versa. (default: ``"cpu"``)
        sample_on (str, optional): ``"host"`` or ``"device"``: where batches
            and negatives are drawn. ``"device"``: the training triples are
            copied to ``device`` once and drawn there from a generator on
            ``device`` seeded from the client's seed
            (:func:`~fedgraph.training.sample_on.device_generator`), whose
            state :meth:`state_dict` saves; no host sync per training step.
            A resumed run continues on the same device type.
            (default: ``"host"``)
        regime (fedgraph.training.regimes.TrainingRegime or str, optional):
            the local training regime
            (:mod:`fedgraph.training.regimes`); the reply is the same entity
            rows under every regime. With reciprocal relations the model gets
            its inverse relations and evaluation ranks heads through them.
            (default: negative sampling)
        regime_kwargs (Mapping[str, Any], optional): the regime's settings
            when ``regime`` is a name. (default: :obj:`None`)
        sampler (str, optional): the negative sampler
            (:mod:`fedgraph.models.samplers`: ``"uniform"``,
            ``"bernoulli"``), built on the client's training triples.
            (default: ``"uniform"``)
        sampler_kwargs (Mapping[str, Any], optional): its own arguments
            (``filtered``, ``max_redraws``). (default: :obj:`None`)
    """

    def __init__(
        self,
        shard: KGShard,
        model: KGEModel,
        *,
        loss: KGELoss | str = "sigmoid-ns",
        lr: float = 1e-4,
        optimizer: str = DEFAULT_OPTIMIZER,
        batch_size: int = 1024,
        num_negatives: int = 256,
        local_epochs: int = 3,
        shared_negatives: bool = True,
        subsampling: bool = True,
        reset_optimizer: bool = True,
        modes: Sequence[str] = MODES,
        directions: Sequence[str] = DIRECTIONS,
        exclude: Tensor | None = None,
        eval_batch_size: int = 512,
        seed: int = 0,
        device: torch.device | str = "cpu",
        sample_on: str = "host",
        regime: TrainingRegime | str | None = None,
        regime_kwargs: Mapping[str, Any] | None = None,
        sampler: str = "uniform",
        sampler_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if model.num_entities != shard.num_entities:
            raise ValueError(
                f"Client {shard.client_id}: `model` has {model.num_entities} "
                f"entities but the shard has {shard.num_entities}"
            )
        if local_epochs < 1:
            raise ValueError(f"`local_epochs` must be positive (got {local_epochs})")
        self.client_id = int(shard.client_id)
        self.device = torch.device(device)
        self._use_regime(regime, regime_kwargs, shard, model)
        self.loss = resolve_loss(loss) if isinstance(loss, str) else loss
        self.lr, self.batch_size = float(lr), int(batch_size)
        self.optimizer_name = check_optimizer(optimizer)
        self.local_epochs = int(local_epochs)
        self.reset_optimizer = bool(reset_optimizer)
        self.modes = tuple(modes)
        self.directions, self.eval_batch_size = tuple(directions), int(eval_batch_size)
        self.exclude = exclude
        self.train_triples = shard.graph.triples("train")
        self.weights = subsampling_weights(self.train_triples) if subsampling else None
        self._use_sampler(sampler, sampler_kwargs, num_negatives, shared_negatives)
        self.filter = _shard_filter(shard, model).to(self.device)
        host_seed = int(seed) * 7919 + self.client_id
        self.generator = torch.Generator().manual_seed(host_seed)
        #: where the samples are drawn (``sample_on``)
        self.samples = SampleSource(sample_on, self.device, host_seed)
        self.optimizer = self._new_optimizer()
        # the table at the end of the previous local training (loss terms)
        self.previous_table: Tensor | None = None

    # ------------------------------------------------------------- helpers
    def _use_regime(
        self,
        regime: TrainingRegime | str | None,
        regime_kwargs: Mapping[str, Any] | None,
        shard: KGShard,
        model: KGEModel,
    ) -> None:
        r"""Resolves the regime and keeps ``model`` adapted to it, on the
        client's device."""
        self.regime = resolve_regime(regime, **dict(regime_kwargs or {}))
        model = self.regime.adapt(model, shard.num_relations)
        self.shard, self.model = shard, model.to(self.device)
        self._prepared: tuple[Tensor, Tensor | None, TrainingData] | None = None

    def _use_sampler(
        self,
        sampler: str,
        sampler_kwargs: Mapping[str, Any] | None,
        num_negatives: int,
        shared: bool,
    ) -> None:
        r"""Builds the negative sampler on the client's training triples
        (:func:`~fedgraph.models.samplers.build_sampler`)."""
        self.sampler = build_sampler(
            sampler,
            sampler_kwargs,
            self.model.num_entities,
            num_negatives,
            shared=shared,
            triples=self.train_triples,
            num_relations=self.shard.num_relations,
        )

    def _new_optimizer(self) -> torch.optim.Optimizer:
        r"""A fresh optimiser over the model (``optimizer``)."""
        return build_optimizer(self.optimizer_name, self.model.parameters(), self.lr)

    @property
    def table(self) -> Tensor:
        return self.model.entity_embedding.weight

    def _on_device(self, rows: Tensor) -> Tensor:
        r"""Received rows as the entity table's device and dtype."""
        return rows.to(device=self.device, dtype=self.table.dtype)

    def _local_index(self, key: str, payload: Payload) -> Tensor:
        r"""Local row positions of the payload's global ids (on the CPU)."""
        if key not in payload.row_ids:
            raise PayloadError(f"Client {self.client_id}: `row_ids['{key}']` missing")
        ids = payload.row_ids[key].long()
        pos = torch.searchsorted(self.shard.entity_ids, ids)
        pos = pos.clamp_max(self.shard.entity_ids.numel() - 1)
        if not torch.equal(self.shard.entity_ids[pos], ids):
            raise PayloadError(
                f"Client {self.client_id} received rows for entities it does not hold"
            )
        return pos

    # ---------------------------------------------------------------- API
    def register(self) -> Payload:
        return Payload(row_ids={ENTITY: self.shard.entity_ids.clone()})

    def draws(self) -> tuple[Tensor, Tensor | None, torch.Generator]:
        r"""The training triples, their loss weights and the generator that
        the local training draws from: :attr:`train_triples`,
        :attr:`weights` and :attr:`generator` on the CPU, or, with
        ``sample_on="device"``, their copies on the client's device (made
        once, again only when the triples or weights are replaced) and the
        device generator (:class:`~fedgraph.training.sample_on.SampleSource`)."""
        data = self.training_data()
        return self.samples(data.items, data.weights, self.generator)

    def training_data(self) -> TrainingData:
        r"""The regime's rows for :attr:`train_triples` and :attr:`weights`
        (:meth:`~fedgraph.training.regimes.TrainingRegime.prepare`), made
        again only when either is replaced (unlearning); its k-vs-all
        labels on the client's device."""
        triples, weights = self.train_triples, self.weights
        cached = self._prepared
        if cached is None or cached[0] is not triples or cached[1] is not weights:
            data = self.regime.prepare(
                triples, weights, self.model.num_entities, self.shard.num_relations
            )
            if data.labels is not None:
                data = data._replace(labels=data.labels.to(self.device))
            self._prepared = cached = (triples, weights, data)
        return cached[2]

    @property
    def sample_on(self) -> str:
        r"""``"host"`` or ``"device"``: where the samples are drawn."""
        return self.samples.sample_on

    def _train_local(self, extra_loss: Callable[..., Tensor] | None = None) -> float:
        r"""``local_epochs`` of :func:`train_epochs` on the client's training
        triples with its optimizer, sampler and generator; the mean loss."""
        triples, weights, generator = self.draws()
        return train_epochs(
            self.model,
            triples,
            epochs=self.local_epochs,
            batch_size=self.batch_size,
            loss=self.loss,
            optimizer=self.optimizer,
            sampler=self.sampler,
            generator=generator,
            modes=self.modes,
            weights=weights,
            extra_loss=extra_loss,
            sample_on=self.sample_on,
            regime=self.regime,
            labels=self.training_data().labels,
        )

    def fit(self, payload: Payload) -> Payload:
        terms = self.prepare_fit(payload)

        def extra(model: KGEModel, *_: Any) -> Tensor:
            out = model.entity_embedding.weight.new_zeros(())
            for term in terms:
                out = out + term(model)
            return out

        return self.fit_reply(self._train_local(extra if terms else None))

    def prepare_fit(self, payload: Payload) -> list[Any]:
        r"""The first part of :meth:`fit`: writes the payload's entity rows,
        keeps the previous table, resets the optimiser (``reset_optimizer``)
        and returns the loss terms the round's config switches on (the
        loss-term hook). Then the local training runs (alone, or batched
        with other clients' by
        :class:`~fedgraph.runtime.batched.BatchedKGETransport`) and
        :meth:`fit_reply` builds the reply."""
        if ENTITY in payload.arrays:
            before = self.table.detach().clone()
            self._write_rows(self.table, payload)
            received = self.table.detach().clone()
            if self.previous_table is None:
                self.previous_table = received.clone()  # FedLU code at round 1
            else:
                self.previous_table = before
        else:
            received = self.table.detach().clone()
        if self.reset_optimizer:
            self.optimizer = self._new_optimizer()
        return active_terms(payload.config, received, self.previous_table)

    def fit_reply(self, mean_loss: float) -> Payload:
        r"""The reply of :meth:`fit` after local training with mean loss
        ``mean_loss``: the entity rows keyed by global id."""
        return Payload(
            arrays={ENTITY: cpu_copy(self.table)},
            row_ids={ENTITY: self.shard.entity_ids.clone()},
            metrics={"count": 1, "loss_sum": mean_loss},
            num_examples=int(self.train_triples.size(0)),
        )

    def _write_rows(self, table: Tensor, payload: Payload) -> None:
        r"""Writes the payload's entity rows (if any) into ``table``."""
        if ENTITY in payload.arrays:
            idx = self._local_index(ENTITY, payload).to(table.device)
            with torch.no_grad():
                table[idx] = payload.arrays[ENTITY].to(table.device, table.dtype)

    def evaluation_model(self, payload: Payload) -> KGEModel:
        r"""A copy of the model that :meth:`evaluate` scores for ``payload``
        (the client's model with the payload's entity rows, if any): e.g. the
        federated model of FedE's model fusion."""
        model = copy.deepcopy(self.model)
        self._write_rows(model.entity_embedding.weight, payload)
        return model

    def use_protocol(self, protocol: Any) -> None:
        r"""Evaluates under ``protocol`` (an
        :class:`~fedgraph.eval.protocol.EvalProtocol` or its name): its
        directions and candidate set (the filter is the client's own
        train + valid + test in every registered protocol)."""
        from fedgraph.eval.protocol import resolve_protocol

        protocol = resolve_protocol(protocol)
        self.directions = tuple(protocol.directions)
        self.exclude = protocol.excluded_ids(self.shard.graph)

    def rank(
        self,
        triples: Tensor,
        model: Any = None,
        *,
        filter: TripleFilter | None = None,
    ) -> LinkPredState:
        r"""Filtered ranking of ``triples`` under the client's protocol (its
        candidates, its ranked directions, its filter unless
        ``filter`` is given) with ``model`` (default: the client's model; any
        object with the KGE scoring API, e.g. a
        :class:`~fedgraph.models.fusion.ScoreFusion`)."""
        model = self.model if model is None else model
        return rank_triples(
            self.regime.scorer(model, self.shard.num_relations),
            triples,
            filter=self.filter if filter is None else filter,
            directions=self.directions,
            batch_size=self.eval_batch_size,
            exclude=self.exclude,
        )

    def evaluate(self, payload: Payload) -> Payload:
        split = str(payload.config.get("split", "valid"))
        saved = None
        if ENTITY in payload.arrays:
            saved = self.table.detach().clone()
            self._write_rows(self.table, payload)
        triples = self.shard.graph.triples(split)
        state = self.rank(triples)
        if saved is not None:
            with torch.no_grad():
                self.table.copy_(saved)
        return Payload(
            metrics={**state.to_dict(), "n_triples": int(triples.size(0))},
            num_examples=int(triples.size(0)),
        )

    def state_dict(self) -> dict[str, Any]:
        r"""The client's state as CPU tensors (model, optimiser, generator,
        the previous round's table; with ``sample_on="device"`` also the
        device generator's state, ``"sample_generator"``)."""
        out = {
            "model": cpu_copy(self.model.state_dict()),
            "optimizer": cpu_copy(self.optimizer.state_dict()),
            "generator": self.generator.get_state(),
            "previous_table": None
            if self.previous_table is None
            else cpu_copy(self.previous_table),
        }
        return {**out, **self.samples.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.samples.load_state_dict(state, f"Client {self.client_id}")
        self.model.load_state_dict(state["model"])
        self.optimizer = self._new_optimizer()
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        prev = state["previous_table"]
        self.previous_table = None if prev is None else self._on_device(prev)

    def __repr__(self) -> str:
        return (
            f"KGEClient(client={self.client_id}, model={self.model!r}, "
            f"local_epochs={self.local_epochs}, batch_size={self.batch_size}"
            + ("" if self.device.type == "cpu" else f", device={self.device}")
            + ("" if self.sample_on == "host" else f", sample_on={self.sample_on!r}")
            + ")"
        )


__all__ = ["KGEClient"]
