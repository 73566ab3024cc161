r"""FedLU learning: local and global entity tables with mutual knowledge
distillation (`FedLU <https://arxiv.org/abs/2302.02069>`_ §4.1)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import cpu_copy
from fedgraph.data.shard import KGShard
from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.ranking import TripleFilter
from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.kge.fede import ENTITY, FedE
from fedgraph.federated.payload import Payload, Scalar
from fedgraph.models.kge import KGEModel
from fedgraph.training.mutual import mutual_epochs
from fedgraph.training.mutual_regime import mutual_regime_epochs
from fedgraph.training.optimizers import build_optimizer
from fedgraph.training.regimes import AllEntityRegime, NegativeSampling

#: config key: the distillation weight sent by the server (both directions,
#: unless the two keys below say otherwise).
MU_DISTILL = "distill-mu"
#: config key: weight of the local model's distillation (teacher: global).
MU_LOCAL = "distill-mu-local"
#: config key: weight of the global model's distillation (teacher: local).
MU_GLOBAL = "distill-mu-global"
#: config key: how a client starts its local table (see :data:`LOCAL_INITS`).
LOCAL_INIT = "local-init"
#: ``"global"``: from the first global rows it receives (FedLU's code:
#: ``Client.init_model`` gets the server's initial table, so every client's
#: local table starts in the frame of the global one); ``"own"``: the local
#: model's own random rows (fedgraph's earlier default).
LOCAL_INITS = ("global", "own")
#: config key: which relation table the global model scores with (see
#: :data:`GLOBAL_RELATIONS`).
GLOBAL_RELATION = "global-relations"
#: ``"shared"``: the client's one relation table, trained by the local step
#: only (FedLU Eqs. 5–6, and its code: the global step's optimiser holds the
#: global entity table alone); ``"own"``: the global model keeps a relation
#: table of its own, trained by the global step (not FedLU: an ablation in
#: which, without distillation, the global model trains exactly as a FedE
#: client, and distillation is the only coupling of the two models).
GLOBAL_RELATIONS = ("shared", "own")
#: distillation schedules of :class:`FedLU`.
SCHEDULES = ("always", "gated")
#: prefix of the global model's metrics in an evaluation reply.
GLOBAL = "global:"


def _split_states(
    metrics: Mapping[str, float],
) -> tuple[LinkPredState, LinkPredState | None]:
    local = {k: v for k, v in metrics.items() if "/" in k and not k.startswith(GLOBAL)}
    glob = {k[len(GLOBAL) :]: v for k, v in metrics.items() if k.startswith(GLOBAL)}
    return LinkPredState.from_dict(local), (
        LinkPredState.from_dict(glob) if glob else None
    )


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    r"""``value`` if it is one of ``choices``, else a :class:`ValueError`
    naming the argument ``name``."""
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {choices} (got {value!r})")
    return value


class FedLU(FedE):
    r"""FedLU's server (Algorithm 1): FedE's entity-wise mean, applied to the
    clients' *global* tables; local tables never leave the clients.

    .. math::
        \mathbf{E}_{t+1} = \Big(\mathbb{1} \oslash \sum_{k \in K_t}
        \mathbf{v}^k\Big) \otimes \sum_{k \in K_t} \mathbf{P}^{k\top}
        \mathbf{E}^{k,\text{global}}_t \qquad \text{(Alg. 1, line 9)}

    It asks the clients for ``mu_distill`` (Eq. 11) and merges both models'
    evaluation states: the local model's metrics unprefixed (reported as
    ``weighted``), the global model's prefixed ``global_`` (``weighted_global``).

    Two distillation schedules:

    * ``"always"`` (the paper's Algorithm 1): both directions from round 1.
    * ``"gated"`` (FedLU's published code, ``fedlu.py``'s ``pipeline``, which
      produced its Table 1): no distillation at first; each validation pass
      compares the weighted local and global validation MRR with their best
      so far and switches a direction on for good: global→local when the
      local model improved and the global did not, local→global when the
      global improved and the local did not, both when neither improved,
      and local→global when, after ``distill_wait`` rounds, either improved
      by at most ``distill_tol`` (the code sets its ``nodistl2g`` flag twice
      there, never ``nodistg2l``; kept as published). The code's early
      stopping comes with it: a validation at which only the global model
      improved does not count towards the patience
      (:meth:`on_validation` returns :obj:`True`).

    Args:
        num_entities (int): size of the global entity vocabulary.
        entity_dim (int): width of an entity row.
        init_range (float): initial rows are :math:`U(-r, r)`.
        mu_distill (float, optional): :math:`\mu_{\text{distill}}`.
            (default: :obj:`2.0`, FedLU §5.2)
        seed (int, optional): seed of the initial table. (default: :obj:`0`)
        config (Mapping[str, Scalar], optional): sent with every training
            payload.
        distill_schedule (str, optional): ``"always"`` or ``"gated"``.
            (default: :obj:`"always"`)
        distill_wait (int, optional): rounds before the gated schedule's
            plateau rule applies (the code's ``--wait_iter``). (default:
            :obj:`20`)
        distill_tol (float, optional): the plateau rule's MRR improvement
            threshold (fraction, not %). (default: :obj:`1e-3`)
        local_init (str, optional): sent to the clients (``"local-init"``):
            ``"global"`` starts each client's local table from the first
            global rows it receives, as FedLU's code does; ``"own"`` from the
            local model's own random rows (:data:`LOCAL_INITS`). (default:
            :obj:`"global"`)
        global_relations (str, optional): sent to the clients
            (``"global-relations"``): ``"shared"``, one relation table per
            client trained by the local step (FedLU); ``"own"``, the global
            model's own relation table, trained by the global step (an
            ablation, :data:`GLOBAL_RELATIONS`). (default: :obj:`"shared"`)
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        init_range: float,
        mu_distill: float = 2.0,
        seed: int = 0,
        config: Mapping[str, Scalar] | None = None,
        distill_schedule: str = "always",
        distill_wait: int = 20,
        distill_tol: float = 1e-3,
        local_init: str = "global",
        global_relations: str = "shared",
    ) -> None:
        if mu_distill < 0:
            raise ValueError(f"`mu_distill` must be >= 0 (got {mu_distill})")
        _check_choice("distill_schedule", distill_schedule, SCHEDULES)
        _check_choice("local_init", local_init, LOCAL_INITS)
        _check_choice("global_relations", global_relations, GLOBAL_RELATIONS)
        if distill_wait < 0 or distill_tol < 0:
            raise ValueError(
                f"`distill_wait` and `distill_tol` must be >= 0 (got "
                f"{distill_wait}, {distill_tol})"
            )
        super().__init__(
            num_entities,
            entity_dim,
            init_range=init_range,
            seed=seed,
            evaluate_with="local",
            config=config,
        )
        self.mu_distill = float(mu_distill)
        self.distill_schedule = distill_schedule
        self.distill_wait = int(distill_wait)
        self.distill_tol = float(distill_tol)
        self.local_init = local_init
        self.global_relations = global_relations
        gated = distill_schedule == "gated"
        #: whether the local model distils from the global one (and back).
        self.global_to_local = not gated
        self.local_to_global = not gated
        self.best_local = self.best_global = 0.0

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        return {
            **super().train_config(server_round),
            MU_DISTILL: self.mu_distill,
            MU_LOCAL: self.mu_distill if self.global_to_local else 0.0,
            MU_GLOBAL: self.mu_distill if self.local_to_global else 0.0,
            LOCAL_INIT: self.local_init,
            GLOBAL_RELATION: self.global_relations,
        }

    def on_validation(self, server_round: int, metrics: Mapping[str, float]) -> bool:
        r"""The gated schedule's switches (see the class docstring). Returns
        whether only the global model improved: FedLU's code counts a
        validation towards early stopping only when neither model improved,
        so the runtime does not count this one (the best round stays the last
        one at which the local model improved, as in the code)."""
        if self.distill_schedule != "gated":
            return False
        loc, glob = float(metrics["mrr"]), float(metrics["global_mrr"])
        gain_l, gain_g = loc - self.best_local, glob - self.best_global
        if server_round > self.distill_wait and min(gain_l, gain_g) <= self.distill_tol:
            self.local_to_global = True
        if gain_l > 0 and gain_g > 0:
            self.best_local, self.best_global = loc, glob
        elif gain_g > 0:
            self.local_to_global, self.best_global = True, glob
            return True
        elif gain_l > 0:
            self.global_to_local, self.best_local = True, loc
        else:
            self.local_to_global = self.global_to_local = True
        return False

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "distill": {
                "global_to_local": self.global_to_local,
                "local_to_global": self.local_to_global,
                "best_local": self.best_local,
                "best_global": self.best_global,
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        d = state.get("distill")  # absent in checkpoints of "always" runs before it
        if d is not None:
            self.global_to_local = bool(d["global_to_local"])
            self.local_to_global = bool(d["local_to_global"])
            self.best_local = float(d["best_local"])
            self.best_global = float(d["best_global"])

    def aggregate_evaluate(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> dict[str, float]:
        locs, globs = [], []
        for p in replies.values():
            loc, glob = _split_states(p.metrics)
            locs.append(loc)
            if glob is not None:
                globs.append(glob)
        out = LinkPredState.merged(locs).compute()
        if globs:
            out.update(
                {
                    f"global_{k}": v
                    for k, v in LinkPredState.merged(globs).compute().items()
                }
            )
        return out

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("evaluate_with", None)
        params["mu_distill"] = self.mu_distill
        params["local_init"] = self.local_init
        if self.global_relations != "shared":
            params["global_relations"] = self.global_relations
        if self.distill_schedule != "always":
            params.update(
                distill_schedule=self.distill_schedule,
                distill_wait=self.distill_wait,
                distill_tol=self.distill_tol,
            )
        return params


class FedLUClient(KGEClient):
    r"""A FedLU client: a local model and a global model over the same local
    entities, sharing the local relation table (FedLU Eqs. 5–6).

    Each round the received global rows replace the global table; then, for
    ``local_epochs`` epochs, every batch takes a local step on
    :math:`\mathcal{L}^{\text{predict}} + \mu_{\text{distill}}
    \mathcal{L}^{\text{distill}}` (Eq. 11, teacher: global) and a global step
    with the roles swapped (:func:`~fedgraph.training.mutual.mutual_epochs`);
    only the global rows are sent back. The local optimiser persists across
    rounds (the local table is never overwritten); the global optimiser starts
    afresh each round, as FedLU's code does. At its first round the client
    also copies the received rows into its local table, unless the server's
    ``"local-init"`` (or ``local_init``) says ``"own"``: FedLU's code starts
    the local and the global table of every client from the server's initial
    table, so the clients' local tables, and the relations trained with them,
    share the global table's frame. Evaluation replies carry the local
    model's ranking state and the global model's, prefixed ``global:``.

    Args:
        shard (KGShard): the client's data.
        model (KGEModel): the local model (its relation table is shared with
            the global model, a deep copy of it).
        mu_distill (float, optional): used when the server does not send
            ``"distill-mu"``. (default: :obj:`2.0`)
        local_init (str, optional): used when the server does not send
            ``"local-init"`` (:data:`LOCAL_INITS`). (default: :obj:`"global"`)
        global_relations (str, optional): used when the server does not send
            ``"global-relations"`` (:data:`GLOBAL_RELATIONS`); with ``"own"``
            the global model's relation table is untied from the local one at
            the first round (both still at their initial values) and joins the
            global optimiser. (default: :obj:`"shared"`)
        **kwargs: :class:`~fedgraph.federated.kge.client.KGEClient` options.
    """

    def __init__(
        self,
        shard: KGShard,
        model: KGEModel,
        *,
        mu_distill: float = 2.0,
        local_init: str = "global",
        global_relations: str = "shared",
        **kwargs: Any,
    ) -> None:
        super().__init__(shard, model, **kwargs)
        plain = repr(self.regime) == repr(NegativeSampling())
        if not plain and not isinstance(self.regime, AllEntityRegime):
            raise ValueError(
                "FedLU's mutual distillation trains with plain negative sampling "
                f"or an all-entity regime (got `regime` {self.regime!r})"
            )
        self.mu_distill = float(mu_distill)
        self.local_init = _check_choice("local_init", local_init, LOCAL_INITS)
        self.global_relations = _check_choice(
            "global_relations", global_relations, GLOBAL_RELATIONS
        )
        #: whether the local table has been started (by :attr:`local_init`)
        self.local_started = False
        self.global_model = copy.deepcopy(model)
        self.global_model.relation_embedding = model.relation_embedding
        self.global_optimizer = self._global_optimizer()

    @property
    def own_relations(self) -> bool:
        r"""Whether the global model has its own relation table
        (``global_relations="own"``, untied at the first round)."""
        return self.global_model.relation_embedding is not self.model.relation_embedding

    def _untie_relations(self) -> None:
        self.global_model.relation_embedding = copy.deepcopy(
            self.model.relation_embedding
        )

    def _global_optimizer(self) -> torch.optim.Optimizer:
        # the local model's optimiser (``optimizer``); older runs used Adam's
        # default kernel here (same update rule, float rounding aside)
        params = list(self.global_model.entity_embedding.parameters())
        if self.own_relations:
            params += list(self.global_model.relation_embedding.parameters())
        return build_optimizer(self.optimizer_name, params, self.lr)

    @property
    def global_table(self) -> Tensor:
        return self.global_model.entity_embedding.weight

    def fit(self, payload: Payload) -> Payload:
        self._write_rows(self.global_table, payload)
        if not self.local_started and ENTITY in payload.arrays:
            how = _check_choice(
                "local_init",
                str(payload.config.get(LOCAL_INIT, self.local_init)),
                LOCAL_INITS,
            )
            if how == "global":
                self._write_rows(self.model.entity_embedding.weight, payload)
            rel = _check_choice(
                "global_relations",
                str(payload.config.get(GLOBAL_RELATION, self.global_relations)),
                GLOBAL_RELATIONS,
            )
            if rel == "own" and not self.own_relations:
                self._untie_relations()
            self.local_started = True
        self.global_optimizer = self._global_optimizer()
        mu = float(payload.config.get(MU_DISTILL, self.mu_distill))
        mu_local = float(payload.config.get(MU_LOCAL, mu))
        mu_global = float(payload.config.get(MU_GLOBAL, mu))
        triples, weights, generator = self.draws()
        if isinstance(self.regime, AllEntityRegime):  # distilled over all entities
            losses = self._mutual_regime(
                triples, weights, generator, mu_local, mu_global
            )
            return self._reply(*losses, mu_local, mu_global)
        loss_l, loss_g = mutual_epochs(
            self.model,
            self.global_model,
            triples,
            epochs=self.local_epochs,
            batch_size=self.batch_size,
            loss=self.loss,
            local_optimizer=self.optimizer,
            global_optimizer=self.global_optimizer,
            sampler=self.sampler,
            generator=generator,
            mu_distill=mu_local,
            mu_global=mu_global,
            weights=weights,
            modes=self.modes,
            sample_on=self.sample_on,
        )
        return self._reply(loss_l, loss_g, mu_local, mu_global)

    def _mutual_regime(
        self,
        triples: Tensor,
        weights: Tensor | None,
        generator: torch.Generator,
        mu_local: float,
        mu_global: float,
    ) -> tuple[float, float]:
        r"""The local epochs of :meth:`fit` under an all-entity regime
        (:func:`~fedgraph.training.mutual_regime.mutual_regime_epochs`)."""
        data = self.training_data()
        return mutual_regime_epochs(
            self.model,
            self.global_model,
            data._replace(items=triples, weights=weights),
            regime=self.regime,  # type: ignore[arg-type]
            epochs=self.local_epochs,
            batch_size=self.batch_size,
            local_optimizer=self.optimizer,
            global_optimizer=self.global_optimizer,
            generator=generator,
            mu_distill=mu_local,
            mu_global=mu_global,
            modes=self.modes,
            labels=data.labels,
            sample_on=self.sample_on,
        )

    def _reply(
        self, loss_l: float, loss_g: float, mu_local: float, mu_global: float
    ) -> Payload:
        r"""The reply of :meth:`fit`: the global rows and the round's
        metrics."""
        return Payload(
            arrays={ENTITY: cpu_copy(self.global_table)},
            row_ids={ENTITY: self.shard.entity_ids.clone()},
            metrics={
                "count": 1,
                "loss_sum": loss_l,
                "global_loss_sum": loss_g,
                # the distillation weights this round used (the gated schedule's
                # switches show in each round's training metrics)
                "mu_local_sum": mu_local,
                "mu_global_sum": mu_global,
            },
            num_examples=int(self.train_triples.size(0)),
        )

    def rank(
        self,
        triples: Tensor,
        model: Any = None,
        *,
        use_global: bool = False,
        filter: TripleFilter | None = None,
    ) -> LinkPredState:
        r""":meth:`KGEClient.rank` with the local model, or with the global
        one if ``use_global``."""
        if use_global:
            model = self.global_model
        return super().rank(triples, model, filter=filter)

    def evaluation_model(self, payload: Payload) -> KGEModel:
        r"""A copy of the local model (the one a FedLU run reports as
        ``weighted``)."""
        return copy.deepcopy(self.model)

    def evaluate(self, payload: Payload) -> Payload:
        split = str(payload.config.get("split", "valid"))
        triples = self.shard.graph.triples(split)
        local = self.rank(triples).to_dict()
        glob = self.rank(triples, use_global=True).to_dict()
        return Payload(
            metrics={
                **local,
                **{GLOBAL + k: v for k, v in glob.items()},
                "n_triples": int(triples.size(0)),
            },
            num_examples=int(triples.size(0)),
        )

    def state_dict(self) -> dict[str, Any]:
        own = (
            {"global_relation": cpu_copy(self.global_model.relation_embedding.weight)}
            if self.own_relations
            else {}
        )
        return {
            **super().state_dict(),
            "global_entity": cpu_copy(self.global_table),
            **own,
            "global_optimizer": cpu_copy(self.global_optimizer.state_dict()),
            "local_started": self.local_started,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        if "global_relation" in state and not self.own_relations:
            self._untie_relations()
        elif "global_relation" not in state and self.own_relations:
            self.global_model.relation_embedding = self.model.relation_embedding
        with torch.no_grad():
            self.global_table.copy_(state["global_entity"])
            if self.own_relations:
                self.global_model.relation_embedding.weight.copy_(
                    state["global_relation"]
                )
        self.global_optimizer = self._global_optimizer()
        self.global_optimizer.load_state_dict(state["global_optimizer"])
        # older checkpoints lack the flag; they were all written
        # after a round, when the local table had been started
        self.local_started = bool(state.get("local_started", True))

    def __repr__(self) -> str:
        return (
            f"FedLUClient(client={self.client_id}, model={self.model!r}, "
            f"mu_distill={self.mu_distill}, local_epochs={self.local_epochs})"
        )


__all__ = [
    "FedLU",
    "FedLUClient",
    "MU_DISTILL",
    "MU_LOCAL",
    "MU_GLOBAL",
    "GLOBAL",
    "LOCAL_INIT",
    "LOCAL_INITS",
    "GLOBAL_RELATION",
    "GLOBAL_RELATIONS",
]
