r"""In-process clients whose local training runs batched: one vectorised
computation for all the round's KGE clients
(:func:`~fedgraph.training.batched.train_epochs_batched`) instead of one
client after another."""

from __future__ import annotations

from collections.abc import Mapping

from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.loss_terms import active_terms
from fedgraph.federated.payload import Payload
from fedgraph.models.samplers import UniformNegativeSampler
from fedgraph.runtime.transport import InProcessTransport
from fedgraph.training.batched import train_epochs_batched
from fedgraph.training.regimes import NegativeSampling

#: How the in-process clients of a round train (``run_simulation``'s
#: ``local_training``).
LOCAL_TRAINING = ("sequential", "batched")
#: Clients per chunk of a batched step on a CPU (see :class:`BatchedKGETransport`).
CPU_CHUNK = 8


def check_batchable(clients: Mapping[int, Client]) -> None:
    r"""Raises :class:`ValueError` unless every client is a plain
    :class:`~fedgraph.federated.kge.client.KGEClient` (its own ``fit`` and
    local training, not a subclass that changes them) and all share the
    settings of one batched computation (epochs, batch size, corruption
    modes, loss) and draws its samples on the host (``sample_on="host"``)."""
    for c, cl in clients.items():
        if not isinstance(cl, KGEClient) or (
            type(cl).fit is not KGEClient.fit
            or type(cl)._train_local is not KGEClient._train_local
        ):
            raise ValueError(
                "`local_training='batched'` needs KGE clients with the plain "
                f"local training (client {c} is a {type(cl).__name__})"
            )
    for c, cl in clients.items():
        if repr(getattr(cl, "regime", None)) not in ("None", repr(NegativeSampling())):
            raise ValueError(
                "`local_training='batched'` trains with plain negative sampling; "
                f"client {c} trains with {cl.regime!r} (use 'sequential')"
            )
        if getattr(cl, "sample_on", "host") != "host":
            raise ValueError(
                "`local_training='batched'` draws every client's samples on the "
                f"host; client {c} draws on the device (use sample_on='host' or "
                "'sequential')"
            )
        name = getattr(cl, "optimizer_name", "adam")
        if name != "adam":
            raise ValueError(
                "`local_training='batched'` steps every client's model with one "
                f"torch.optim.Adam; client {c} trains with {name} (use "
                "'sequential')"
            )
        sampler = getattr(cl, "sampler", None)
        if sampler is not None and not isinstance(sampler, UniformNegativeSampler):
            raise ValueError(
                "`local_training='batched'` corrupts one side per step with the "
                f"uniform sampler; client {c} uses {type(sampler).__name__} "
                "(use 'sequential')"
            )
    kinds = {
        (cl.local_epochs, cl.batch_size, cl.modes, repr(cl.loss), cl.lr)
        for cl in clients.values()
        if isinstance(cl, KGEClient)
    }
    if len(kinds) > 1:
        raise ValueError(
            "`local_training='batched'` needs one local_epochs, batch_size, "
            f"modes, loss and lr for all clients (got {sorted(map(str, kinds))})"
        )


def check_batched_run(strategy: Strategy, clients: Mapping[int, Client]) -> None:
    r""":func:`check_batchable`, and a :class:`ValueError` when
    ``strategy``'s training config switches on a loss term (FedProx's
    proximal term, FedEC's contrastive term…), before the run starts."""
    check_batchable(clients)
    train_config = getattr(strategy, "train_config", None)
    if train_config is None or not clients:
        return
    table = next(iter(clients.values())).table.detach()  # type: ignore[attr-defined]
    terms = active_terms(train_config(1), table, table)
    if terms:
        names = ", ".join(type(t).__name__ for t in terms)
        raise ValueError(
            f"`local_training='batched'` does not support loss terms ({names}, "
            f"asked for by {type(strategy).__name__}); use 'sequential'"
        )


class BatchedKGETransport(InProcessTransport):
    r"""An :class:`~fedgraph.runtime.InProcessTransport` whose ``fit``
    trains the round's clients together: each client takes the payload
    (:meth:`~fedgraph.federated.kge.client.KGEClient.prepare_fit`), then all
    local epochs run as one computation
    (:func:`~fedgraph.training.batched.train_epochs_batched`: every client
    takes the steps it would take alone, on its own batches and negatives,
    so the run equals the sequential one up to float rounding), then each
    client replies (:meth:`~fedgraph.federated.kge.client.KGEClient.fit_reply`).
    Evaluation is the clients' own, one after another.

    Rounds whose config switches on a loss term (FedProx, FedEC…) are
    refused: the terms are per-client functions of a model.

    Args:
        clients (Mapping[int, Client]): client id → :class:`KGEClient`.
        chunk_size (int, optional): clients scored and back-propagated
            together within a step (``chunk_size`` of
            :func:`~fedgraph.training.batched.train_epochs_batched`).
            (default: :obj:`None`: :data:`CPU_CHUNK` clients on a CPU, where
            a chunk's intermediates then stay in cache; all of them on
            another device)
    """

    def __init__(
        self, clients: Mapping[int, Client], chunk_size: int | None = None
    ) -> None:
        check_batchable(clients)
        super().__init__(clients)
        self.chunk_size = chunk_size

    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        ids = list(payloads)
        clients: list[KGEClient] = [self.clients[c] for c in ids]  # type: ignore[misc]
        for c, cl in zip(ids, clients, strict=True):
            if cl.prepare_fit(payloads[c].detach()):
                raise ValueError(
                    f"round {server_round}: the config switches on a loss term "
                    f"for client {c}, which `local_training='batched'` does not "
                    "support (use 'sequential')"
                )
        if not clients:
            return {}
        first = clients[0]
        chunk = self.chunk_size
        if chunk is None and first.device.type == "cpu":
            chunk = CPU_CHUNK
        losses = train_epochs_batched(
            [cl.model for cl in clients],
            [cl.train_triples for cl in clients],
            epochs=first.local_epochs,
            batch_size=first.batch_size,
            loss=first.loss,
            optimizers=[cl.optimizer for cl in clients],
            samplers=[cl.sampler for cl in clients],
            generators=[cl.generator for cl in clients],
            modes=first.modes,
            weights=[cl.weights for cl in clients],
            chunk_size=chunk,
        )
        return {
            c: cl.fit_reply(value)
            for c, cl, value in zip(ids, clients, losses, strict=True)
        }


__all__ = [
    "BatchedKGETransport",
    "check_batchable",
    "check_batched_run",
    "LOCAL_TRAINING",
]
