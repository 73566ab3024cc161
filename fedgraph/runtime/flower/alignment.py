r"""The alignment step at the start of a Flower run: the clients tell the
server every size it needs, so the server holds no client data.

Before the strategy is built, the server sends each connected SuperNode one
``"query.align"`` message. Each node answers from its own shard with what
the algorithm needs and nothing more (:meth:`Alignment.node_reply`); the
server checks that the answers agree and turns them into an
:class:`AlignedRun` (:meth:`Alignment.merge`): the number of clients, the
node of each client and the sizes the strategy is built with. The server's
initial shared parameters then come from the run seed (the KGE strategies'
global entity table) or from one node's registration upload (Fed-RGCN's
bases, from client 0), never from a shard.

The step is replaceable: an app pair takes an :class:`Alignment` object
(``make_server_app(..., alignment=A)``, ``make_client_app(..., alignment=A)``).
The default ones trust the global ids the partitioner gave each shard; a
privacy-preserving alignment (keyed hashes of entity names, private set
intersection) overrides :meth:`Alignment.align` to run its own exchanges
through the ``exchange`` function it is given and returns the same
:class:`AlignedRun`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fedgraph.runtime.flower.federation import DATA_DIR, node_data
from fedgraph.runtime.flower.protocol import PARTITION_ID, ClientReplyError

#: what a node sends in its alignment reply: integers, floats, strings, bools.
Reply = dict[str, int | float | str | bool]

#: ``exchange({node id: request}) -> {node id: reply}``: one ``"query.align"``
#: message per node (the request is the reply's format), replies checked.
Exchange = Callable[[Mapping[int, Reply]], dict[int, Reply]]


@dataclass
class AlignedRun:
    r"""What the server learnt in the alignment step.

    Attributes:
        num_clients (int): the federation's number of clients.
        nodes (dict[int, int]): client id (``partition-id``) → Flower node id
            of the nodes that answered.
        sizes (dict[str, int]): the sizes the strategy is built with
            (KGE: ``num-entities``, the global vocabulary size).
        keyed (bool): whether the nodes aligned by keyed hashes of their
            names (then they speak tokens, never ids, and the server's rows
            are the tokens' ranks).
    """

    num_clients: int
    nodes: dict[int, int] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    keyed: bool = False


class Alignment:
    r"""The default alignment: each node reports its ``partition-id``, the
    federation's number of clients and the sizes in :attr:`size_keys`, read
    from its own partition metadata by ``describe``; the server requires
    every node to report the same values.

    Args:
        describe (callable): ``describe(settings, node_config) -> Reply`` on
            the node: ``partition-id``, ``num-clients`` and each of
            :attr:`size_keys`.
        size_keys (tuple[str, ...]): the sizes the server needs.
    """

    def __init__(
        self,
        describe: Callable[[Any, Any], Reply],
        size_keys: tuple[str, ...] = (),
    ) -> None:
        self.describe = describe
        self.size_keys = tuple(size_keys)

    # ------------------------------------------------------------ node side
    def node_reply(self, settings: Any, node_config: Any, request: Reply) -> Reply:
        r"""The node's answer to an alignment request (runs in the ClientApp)."""
        out = dict(self.describe(settings, node_config))
        missing = [
            k for k in (PARTITION_ID, "num-clients", *self.size_keys) if k not in out
        ]
        if missing:
            raise RuntimeError(f"The node's alignment reply lacks {missing}")
        return out

    # ---------------------------------------------------------- server side
    def align(self, exchange: Exchange, nodes: list[int]) -> AlignedRun:
        r"""Runs the alignment over ``nodes`` (one exchange by default)."""
        return self.merge(exchange({n: {} for n in nodes}))

    def merge(self, replies: Mapping[int, Reply]) -> AlignedRun:
        r"""Checks that the nodes agree and that no two play the same client."""
        if not replies:
            raise ClientReplyError("No SuperNode answered the alignment request")
        first_node = min(replies)
        reference = replies[first_node]
        nodes: dict[int, int] = {}
        for node, reply in sorted(replies.items()):
            for key in ("num-clients", *self.size_keys):
                if reply.get(key) != reference.get(key):
                    raise ClientReplyError(
                        f"Node {node} (partition-id {reply.get(PARTITION_ID)}) "
                        f"reports {key} = {reply.get(key)!r}, node {first_node} "
                        f"(partition-id {reference.get(PARTITION_ID)}) "
                        f"{reference.get(key)!r}: the nodes hold different "
                        "partitions; the run stops."
                    )
            cid = reply.get(PARTITION_ID)
            num_clients = int(reference["num-clients"])
            if not isinstance(cid, int) or not 0 <= cid < num_clients:
                raise ClientReplyError(
                    f"Node {node} reports partition-id {cid!r}; expected one of "
                    f"0 … {num_clients - 1}."
                )
            if cid in nodes:
                raise ClientReplyError(
                    f"Nodes {nodes[cid]} and {node} both registered as client "
                    f"{cid}: give each SuperNode its own --node-config "
                    '"partition-id=K".'
                )
            nodes[cid] = node
        return AlignedRun(
            num_clients=int(reference["num-clients"]),
            nodes=nodes,
            sizes={k: int(reference[k]) for k in self.size_keys},
        )


def describe_kge_node(settings: Any, node_config: Any) -> Reply:
    r"""A KGE node's alignment reply: its ``partition-id``, the number of
    clients and the global vocabulary size (``num-entities``) of its
    partition. Its triples, entity and relation names stay on the node. A
    node holding only its own client folder (node config ``data-dir``) knows
    no global vocabulary: it aligns by keyed names, which the apps of
    :mod:`fedgraph.privacy.flower` run."""
    data = node_data(settings.data, node_config)
    if data.own_folder:
        raise ValueError(
            f"Node-config key `{DATA_DIR}`: a node holding only its own client "
            "folder aligns by keyed hashes of its names, which these apps do not "
            "run; use the apps of fedgraph.privacy.flower (examples/"
            "flower_private_app) with `alignment-secret` in the node config"
        )
    return {
        PARTITION_ID: data.shard.client_id,
        "num-clients": int(data.num_clients),
        "num-entities": int(data.num_entities),
    }


#: The KGE apps' alignment: the server builds the global entity table from
#: ``num-entities`` and the run seed.
KGE_ALIGNMENT = Alignment(describe_kge_node, ("num-entities",))

__all__ = [
    "Alignment",
    "AlignedRun",
    "KGE_ALIGNMENT",
    "describe_kge_node",
]
