r"""Private entity alignment in the alignment step of a Flower deployment
(:mod:`fedgraph.runtime.flower.alignment`): each node reports its entities'
keyed-hash tokens under the federation secret, which it reads from the file
its node config names; the server sizes its table by their union."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedgraph.runtime.flower.alignment import (
    AlignedRun,
    Alignment,
    Reply,
    describe_kge_node,
)
from fedgraph.runtime.flower.federation import node_data

#: node-config key: the file holding the federation secret (hex).
SECRET_KEY = "alignment-secret"
#: alignment-reply key: the node's entity tokens (private alignment).
TOKENS_KEY = "entity-tokens"


def node_secret(node_config: Mapping[str, Any]) -> bytes:
    r"""The federation secret of private alignment, from the file the node
    config's ``alignment-secret`` names (hex, e.g. 64 characters)."""
    value = node_config.get(SECRET_KEY) if hasattr(node_config, "get") else None
    if not isinstance(value, str) or not value:
        raise ValueError(
            "This node aligns by keyed names (node config `data-dir`, or run "
            "config `privacy.private-alignment`), so it needs the federation "
            'secret: --node-config "partition-id=K '
            "alignment-secret='/path/secret.key'\" (the same hex file on every "
            "client node, e.g. from `python -c 'import secrets; "
            "print(secrets.token_hex(32))'`; never on the server)"
        )
    path = Path(value)
    try:
        text = path.read_text().strip()
    except OSError as exc:
        raise ValueError(
            f"Node-config key `{SECRET_KEY}`: cannot read {path} ({exc.strerror})"
        ) from None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) < 16:
        raise ValueError(
            f"Node-config key `{SECRET_KEY}`: {path} must hold at least 16 bytes "
            "as hex (32 hex characters or more)"
        )
    return secret


def describe_private_node(settings: Any, node_config: Any) -> Reply:
    r"""A node's alignment reply. With private alignment, or on a node that
    holds only its own client folder (node config ``data-dir``): its
    partition id, the number of clients and the keyed tokens of its entity
    names (no vocabulary size, no id: the server sizes its table by the
    union of the tokens); otherwise
    :func:`~fedgraph.runtime.flower.alignment.describe_kge_node`'s."""
    data = node_data(settings.data, node_config)
    if not keyed_names(getattr(settings, "privacy", None), data.own_folder):
        return describe_kge_node(settings, node_config)
    from fedgraph.privacy.alignment import entity_tokens, shard_names
    from fedgraph.runtime.flower.protocol import PARTITION_ID

    names = shard_names(data.shard, "entity", data.entity_names)
    tokens = entity_tokens(names, node_secret(node_config))
    return {
        PARTITION_ID: data.shard.client_id,
        "num-clients": int(data.num_clients),
        TOKENS_KEY: sorted(tokens.tolist()),  # type: ignore[dict-item]
    }


def keyed_names(privacy: Any, own_folder: bool) -> bool:
    r"""Whether a node aligns by keyed names: with private alignment, and
    always when it holds only its own client folder (it knows no global
    id)."""
    return own_folder or bool(privacy is not None and privacy.private_alignment)


class PrivateAlignment(Alignment):
    r"""The alignment step of the private apps: the KGE alignment, or, with
    private alignment, the union of the nodes' entity tokens, whose size is
    the server's table size (``num-entities``)."""

    def __init__(self) -> None:
        super().__init__(describe_private_node, ("num-entities",))

    def node_reply(self, settings: Any, node_config: Any, request: Reply) -> Reply:
        out = dict(self.describe(settings, node_config))
        if TOKENS_KEY not in out:
            return super().node_reply(settings, node_config, request)
        return out

    def merge(self, replies: Mapping[int, Reply]) -> AlignedRun:
        with_tokens = [TOKENS_KEY in r for r in replies.values()]
        if not any(with_tokens):
            return super().merge(replies)
        if not all(with_tokens):
            from fedgraph.runtime.flower.protocol import ClientReplyError

            raise ClientReplyError(
                "Some nodes align by entity tokens and some by global ids: the "
                "nodes run different run configs (`privacy.private-alignment`) or "
                "only some hold their own client folder (`data-dir`)"
            )
        import torch

        tokens = [
            torch.tensor(r[TOKENS_KEY], dtype=torch.long) for r in replies.values()
        ]
        union = int(torch.unique(torch.cat(tokens)).numel())
        sized = {
            n: {
                **{k: v for k, v in r.items() if k != TOKENS_KEY},
                "num-entities": union,
            }
            for n, r in replies.items()
        }
        aligned = super().merge(sized)
        aligned.keyed = True
        return aligned


#: the private apps' alignment step.
PRIVATE_ALIGNMENT = PrivateAlignment()


__all__ = [
    "SECRET_KEY",
    "TOKENS_KEY",
    "node_secret",
    "describe_private_node",
    "keyed_names",
    "PrivateAlignment",
    "PRIVATE_ALIGNMENT",
]
