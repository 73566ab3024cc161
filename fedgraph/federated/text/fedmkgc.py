r"""FedMKGC: federated multilingual KGC by averaging language-model weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor

from fedgraph.eval.metrics import LinkPredState
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.payload import Payload, Scalar
from fedgraph.federated.text.client import LOCAL_EPOCHS

#: The two schedules of FedMKGC.
SCHEDULES = ("parallel", "sequential")


class FedMKGC(FedAvg):
    r"""FedMKGC ("FedMKGC: Privacy-Preserving Federated Multilingual Knowledge
    Graph Completion", Tang et al.), server side of Algorithm 1: each client
    is one language's KG training a local language model
    (:class:`~fedgraph.federated.FedMKGCClient`); the server averages the
    language-model weights of the round's clients :math:`S_t` with equal
    weights (the paper's choice in Eq. 1, "we regard each KG equal"):

    .. math::
        w_{t+1} = \sum_{i \in S_t} \frac{1}{|S_t|}\, w_t^i

    Schedules:

    * ``"parallel"``: every client of the round (all of them, or the
      ``fraction`` that :func:`~fedgraph.runtime.run_simulation` samples:
      the paper's :math:`m` clients per round of Fig. 2) trains from
      :math:`w_t`;
    * ``"sequential"``: the setting of the paper's main results, one client
      per round in an agreed ``order``: round :math:`t` trains client
      ``order[(t - 1) mod M]`` only, and :math:`w_{t+1}` is its weights. The
      round's clients must include it (use ``fraction=1.0``).

    Relation prefixes never reach the server (clients keep them). Every
    evaluation payload carries :math:`w_t`, so each client scores the global
    language model with its own prefixes. :meth:`aggregate_evaluate` merges
    the clients' :class:`~fedgraph.eval.LinkPredState` sums: the exact
    query-weighted MRR, MR and Hits@k, pooled and per direction.

    Args:
        initial_arrays (Mapping[str, Tensor]): :math:`w_0`, the language
            model's weights (:meth:`BiEncoder.shared_arrays`).
        schedule (str, optional): ``"parallel"`` or ``"sequential"``.
            (default: :obj:`"parallel"`)
        order (Sequence[int], optional): the sequential order of client ids
            (default: the registered clients in ascending id order).
        local_epochs (int, optional): epochs per round, sent as
            ``local-epochs``. (default: :obj:`1`)
        config (Mapping[str, Scalar], optional): more training config.
    """

    def __init__(
        self,
        initial_arrays: Mapping[str, Tensor],
        *,
        schedule: str = "parallel",
        order: Sequence[int] | None = None,
        local_epochs: int = 1,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        if schedule not in SCHEDULES:
            raise ValueError(
                f"`schedule` must be one of {SCHEDULES} (got {schedule!r})"
            )
        if local_epochs < 1:
            raise ValueError(f"`local_epochs` must be positive (got {local_epochs})")
        if order is not None:
            if len(order) == 0 or len(set(order)) != len(order):
                raise ValueError(
                    f"`order` must list distinct client ids (got {list(order)})"
                )
        super().__init__(
            initial_arrays, config={LOCAL_EPOCHS: local_epochs, **(config or {})}
        )
        self.schedule = schedule
        self.local_epochs = int(local_epochs)
        self.order: list[int] | None = (
            None if order is None else [int(c) for c in order]
        )

    def register(self, registrations: Mapping[int, Payload]) -> None:
        r"""Fixes the default sequential order: the registered clients in
        ascending id order (a given ``order`` must name registered clients)."""
        ids = sorted(int(c) for c in registrations)
        if self.order is None:
            self.order = ids
        elif unknown := sorted(set(self.order) - set(ids)):
            raise ValueError(
                f"`order` names clients {unknown} that did not register "
                f"(registered: {ids})"
            )

    def turn(self, server_round: int) -> int:
        r"""The client that trains in ``server_round`` (sequential schedule)."""
        if not self.order:
            raise RuntimeError(
                "The sequential schedule has no client `order` (none was given "
                "and no client registered)"
            )
        return self.order[(int(server_round) - 1) % len(self.order)]

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        cfg = self.train_config(server_round)
        if self.schedule == "sequential":
            c = self.turn(server_round)
            if c not in client_ids:
                raise ValueError(
                    f"Round {server_round} is client {c}'s turn (order "
                    f"{self.order}) but it was not sampled ({list(client_ids)}); "
                    "the sequential schedule needs `fraction=1.0`"
                )
            client_ids = [c]
        # The round's payloads share the global tensors: every transport hands
        # over a copy (Payload.detach), and this avoids M copies of the LM.
        return {
            c: Payload(arrays=dict(self.arrays), config=dict(cfg)) for c in client_ids
        }

    def client_weights(self, replies: Mapping[int, Payload]) -> list[float]:
        r"""Equal weights (FedMKGC averages the clients' language models
        regardless of their KG sizes)."""
        return [1.0] * len(replies)

    def configure_evaluate(
        self, server_round: int, client_ids: Sequence[int], split: str = "valid"
    ) -> dict[int, Payload]:
        return {
            c: Payload(arrays=dict(self.arrays), config={"split": split})
            for c in client_ids
        }

    def aggregate_evaluate(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> dict[str, float]:
        r"""The merged :class:`~fedgraph.eval.LinkPredState` of the replies
        (``"mrr"``, ``"hits@k"``, ``"head_mrr"``, …, ``"n_queries"``)."""
        states = [
            LinkPredState.from_dict({k: v for k, v in p.metrics.items() if "/" in k})
            for p in replies.values()
        ]
        return LinkPredState.merged(states).compute() if states else {}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "order": self.order}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        order = state.get("order")
        self.order = None if order is None else [int(c) for c in order]

    def get_params(self) -> dict[str, Any]:
        return {
            "schedule": self.schedule,
            "order": self.order,
            "local_epochs": self.local_epochs,
            "num_arrays": len(self.arrays),
        }


__all__ = ["FedMKGC", "SCHEDULES"]
