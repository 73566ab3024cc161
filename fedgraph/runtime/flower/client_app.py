r"""The fedgraph ``ClientApp``: one fedgraph :class:`~fedgraph.federated.Client`
per SuperNode, built from the run config and the node's ``partition-id``.

Each handler converts the message content to a
:class:`~fedgraph.federated.Payload`, calls the fedgraph client and replies
with the client's payload. The client object is rebuilt for every message
(a SuperNode runs each message in a fresh process) and its state — model
parameters incl. local relation tables, optimiser moments, generator — is
loaded from and written back to ``context.state``
(:mod:`fedgraph.runtime.flower.state`). Three states may live there:

* ``"client"``: the current state, written after registration and ``fit``;
* ``"candidate"``: the state evaluated on ``"valid"`` (with its round);
* ``"best"``: the candidate of the round the server reports as best
  (control key ``"best-round"``), evaluated on ``"test"`` at the end (and
  fused with the node's single-KG model when the run config asks for FedE's
  model fusion, :func:`fuse_on_node`).

The read-only data (the partition, or the node's own client folder named
by the node config's ``data-dir``) is cached per process
(:func:`~fedgraph.runtime.flower.federation.node_data`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fedgraph.federated.base import Client
from fedgraph.federated.payload import Payload
from fedgraph.runtime.flower.alignment import KGE_ALIGNMENT
from fedgraph.runtime.flower.config import (
    FlowerRunSettings,
    node_device,
    single_dir,
    use_threads,
)
from fedgraph.runtime.flower.failures import node_errors_mod
from fedgraph.runtime.flower.federation import node_data
from fedgraph.runtime.flower.protocol import (
    BEST_ROUND,
    CHECKPOINT,
    PARTITION_ID,
    REGISTER,
    REJOIN_ROUND,
    RESTORED_ROUND,
    RESUME_ROUND,
    SERVER_ROUND,
    SNAPSHOT,
    USE_BEST,
    from_content,
    reply_content,
)
from fedgraph.runtime.flower.state import (
    has_state,
    load_state,
    move_state,
    restore_snapshot,
    save_snapshot,
    save_state,
    state_meta,
)

CURRENT, CANDIDATE, BEST = "client", "candidate", "best"

#: ``f(settings, node_config) -> (client, client id)``.
ClientBuilder = Callable[[Any, Any], tuple[Client, int]]


def build_kge_client(cfg: FlowerRunSettings, node_config: Any) -> tuple[Client, int]:
    r"""The KGE client of this node: the ``kge_algorithms`` builder of
    ``cfg.algorithm`` applied to the node's shard only (models are seeded per
    client, so it equals the simulation's client ``partition-id``), on the
    node config's ``device`` (:func:`~fedgraph.runtime.flower.config.node_device`).
    The shard is the node's own client folder when the node config names one
    (``data-dir``, :func:`~fedgraph.runtime.flower.federation.node_data`):
    its ids are then its own, which only keyed-name alignment (the apps of
    :mod:`fedgraph.privacy.flower`) turns into shared rows."""
    import dataclasses

    from fedgraph.data.shard import FederatedKG
    from fedgraph.federated.kge.setup import build_kge_federation

    data = node_data(cfg.data, node_config)
    cid = data.shard.client_id
    settings = dataclasses.replace(cfg.settings, device=node_device(node_config))
    own = FederatedKG([data.shard], data.num_entities, data.num_relations)
    _, clients = build_kge_federation(cfg.algorithm, own, settings)
    return clients[cid], cid


def state_dir(cfg: Any, node_config: Any, cid: int) -> Path:
    r"""Where the node of client ``cid`` keeps the snapshots of a
    checkpointed run: ``{state-dir}/{run-name}/client{cid}`` (node config
    ``state-dir``, run config ``run-name``)."""
    root = node_config.get("state-dir") if hasattr(node_config, "get") else None
    if not isinstance(root, str) or not root:
        raise ValueError(
            "This run is checkpointed (run config `checkpoint-dir`), so every "
            'SuperNode needs a node-local folder: --node-config "partition-id=K '
            "state-dir='/path/to/state'\""
        )
    name = getattr(cfg, "run_name", "")
    return Path(root) / name / f"client{cid}"


def fuse_on_node(
    client: Client, payload: Payload, cfg: FlowerRunSettings, node_config: Any
) -> Payload:
    r"""FedE's model fusion (FedE §2.2.3) on this node: the model ``client``
    is tested with for ``payload`` (its federated model) and its single-KG
    model from the node config's ``single-dir`` (``trainerK.pt``; model,
    width and margin from ``results.json`` there, else the run's) are fused
    by a linear layer fitted on the client's own triples
    (:func:`~fedgraph.training.fusion.fuse_client`, options from the run
    config's ``fusion.*``). Nothing but the three models' test sums and the
    layer's four numbers leave the node."""
    from fedgraph.runtime.flower.fusion import fusion_to_metrics
    from fedgraph.training.fusion import fuse_client
    from fedgraph.training.fusion_io import load_single_model, single_model_settings

    opts = cfg.fusion
    if opts is None:
        raise RuntimeError(
            "The server asked for model fusion but this run config does not set "
            "`fusion.enabled = true`: server and nodes run different configs."
        )
    folder = single_dir(node_config)
    s = cfg.settings
    model_settings = single_model_settings(
        folder, {"model": s.model, "dim": s.dim, "gamma": s.gamma}
    )
    single = load_single_model(folder, client.shard, model_settings)
    federated = client.evaluation_model(payload)
    row, states = fuse_client(
        client,
        single,
        federated,
        fit_split=opts.fit_on,
        seed=opts.seed,
        **opts.fit_kwargs(),
    )
    return Payload(metrics=fusion_to_metrics(row, states), num_examples=row["n_test"])


def _promote(records: Any, control: dict[str, Any]) -> None:
    best = int(control.get(BEST_ROUND, 0))
    if (
        best > 0
        and has_state(records, CANDIDATE)
        and int(state_meta(records, CANDIDATE)["round"]) == best
    ):
        move_state(records, CANDIDATE, BEST)


def _rejoin_state(cfg: Any, context: Any, cid: int, control: dict[str, Any]) -> None:
    r"""A node rejoining after a failure without its ``context.state`` (a
    restarted SuperNode) restores its newest snapshot at or before the
    control's ``rejoin-round`` when the run is checkpointed and it has one;
    otherwise it starts again from its initial state."""
    if has_state(context.state, CURRENT) or not control.get(CHECKPOINT):
        return
    try:
        folder = state_dir(cfg, context.node_config, cid)
        restore_snapshot(folder, int(control[REJOIN_ROUND]), context.state)
    except (ValueError, FileNotFoundError):
        pass


def _setup(
    message: Any, context: Any, parse: Callable[[Any], Any], build_client: ClientBuilder
) -> tuple[Client, int, Any, dict, Any]:
    r"""The node's client for ``message``: built from the run config, its
    state restored (a resumed or rejoining run's snapshot, else the state kept
    in ``context.state``); with the payload, the control keys and settings."""
    cfg = parse(context.run_config)
    use_threads(cfg.threads)
    client, cid = build_client(cfg, context.node_config)
    payload, control = from_content(message.content)
    if RESUME_ROUND in control and not has_state(context.state, CURRENT):
        restore_snapshot(
            state_dir(cfg, context.node_config, cid),
            int(control[RESUME_ROUND]),
            context.state,
        )
    if REJOIN_ROUND in control:
        _rejoin_state(cfg, context, cid, control)
    _promote(context.state, control)
    state = load_state(context.state, CURRENT)
    if state is not None:
        client.load_state_dict(state)
    elif message.metadata.message_type != REGISTER:
        raise RuntimeError(
            f"Client {cid} holds no state for this run: it never registered, "
            "or its SuperNode was restarted (context.state is kept in the "
            "SuperNode's memory; a checkpointed run resumes with `resume = "
            "true`); training on would silently start from scratch, so the "
            "run stops."
        )
    return client, cid, payload, control, cfg


def _use_best(client: Client, cid: int, control: dict, context: Any) -> None:
    r"""Loads the best round's state when the server asks for it."""
    if not control.get(USE_BEST):
        return
    best = load_state(context.state, BEST)
    if best is None:
        raise RuntimeError(
            f"Client {cid} was asked for its best-round state (round "
            f"{control.get(BEST_ROUND)}) but kept none: was the node "
            "restarted during the run?"
        )
    client.load_state_dict(best)


def _reply(
    message: Any,
    context: Any,
    cfg: Any,
    received: dict[str, Any],
    cid: int,
    payload: Any,
    **control: int | bool,
) -> Any:
    r"""The reply to ``message``; a checkpointed run snapshots the state."""
    from flwr.app import Message

    # A checkpointed run: the node saves its state after every message
    # but the final test pass and a resumed registration (which change
    # nothing).
    if (
        received.get(CHECKPOINT)
        and not received.get(USE_BEST)
        and RESUME_ROUND not in received
        and REJOIN_ROUND not in received
    ):
        save_snapshot(
            state_dir(cfg, context.node_config, cid),
            int(received.get(SERVER_ROUND, 0)),
            context.state,
            (CURRENT, CANDIDATE, BEST),
        )
    return Message(reply_content(message.content, payload, control), reply_to=message)


def _rejoin_reply(
    message: Any, context: Any, cfg: Any, control: dict, client: Client, cid: int
) -> Any:
    r"""A node back after a failure registers nothing new: it answers with the
    round its restored state is at (its initial state when it kept none)."""
    if not has_state(context.state, CURRENT):
        client.register()
        save_state(context.state, CURRENT, client.state_dict(), round=0)
    restored = int(state_meta(context.state, CURRENT)["round"])
    return _reply(
        message,
        context,
        cfg,
        control,
        cid,
        Payload(),
        **{PARTITION_ID: cid, RESTORED_ROUND: restored},
    )


def make_client_app(
    build_client: ClientBuilder = build_kge_client,
    parse: Callable[[Any], Any] = FlowerRunSettings.from_run_config,
    alignment: Any = None,
) -> Any:
    r"""A ``flwr.clientapp.ClientApp`` serving fedgraph clients made by
    ``build_client`` (default: :func:`build_kge_client`) from the settings
    ``parse`` reads off the run config (default:
    :meth:`FlowerRunSettings.from_run_config`). ``alignment`` answers the
    server's alignment request (default:
    :data:`~fedgraph.runtime.flower.alignment.KGE_ALIGNMENT`). The mods the
    run config names (``client-mods``) wrap every handler
    (:func:`~fedgraph.runtime.flower.mods.run_config_mods`), inside
    :func:`~fedgraph.runtime.flower.failures.node_errors_mod`."""
    from flwr.app import Context, Message
    from flwr.clientapp import ClientApp

    from fedgraph.runtime.flower.mods import run_config_mods

    if alignment is None:
        alignment = KGE_ALIGNMENT
    app = ClientApp(mods=[node_errors_mod, run_config_mods])  # errors: no text
    setup = functools.partial(_setup, parse=parse, build_client=build_client)

    @app.query("align")
    def align(message: Message, context: Context) -> Message:
        cfg = parse(context.run_config)
        _, request = from_content(message.content)
        out = alignment.node_reply(cfg, context.node_config, request)
        return Message(reply_content(message.content, Payload(), out), reply_to=message)

    @app.query("register")
    def register(message: Message, context: Context) -> Message:
        client, cid, _, control, cfg = setup(message, context)
        if REJOIN_ROUND in control:  # back after a failure: no new registration
            return _rejoin_reply(message, context, cfg, control, client, cid)
        out = client.register()
        if not has_state(context.state, CURRENT):
            save_state(context.state, CURRENT, client.state_dict(), round=0)
        return _reply(message, context, cfg, control, cid, out, **{PARTITION_ID: cid})

    @app.train()
    def train(message: Message, context: Context) -> Message:
        client, cid, payload, control, cfg = setup(message, context)
        out = client.fit(payload)
        rnd = int(control.get(SERVER_ROUND, 0))
        save_state(context.state, CURRENT, client.state_dict(), round=rnd)
        return _reply(message, context, cfg, control, cid, out)

    @app.evaluate()
    def evaluate(message: Message, context: Context) -> Message:
        client, cid, payload, control, cfg = setup(message, context)
        _use_best(client, cid, control, context)
        out = client.evaluate(payload)
        if control.get(SNAPSHOT):
            rnd = int(control.get(SERVER_ROUND, 0))
            save_state(context.state, CANDIDATE, client.state_dict(), round=rnd)
        return _reply(message, context, cfg, control, cid, out)

    @app.query("fuse")
    def fuse(message: Message, context: Context) -> Message:
        client, cid, payload, control, cfg = setup(message, context)
        _use_best(client, cid, control, context)
        out = fuse_on_node(client, payload, cfg, context.node_config)
        return _reply(message, context, cfg, control, cid, out)

    return app


#: The ``ClientApp`` of ``[tool.flwr.app.components] clientapp``.
app = make_client_app()

__all__ = [
    "app",
    "make_client_app",
    "build_kge_client",
    "fuse_on_node",
]
