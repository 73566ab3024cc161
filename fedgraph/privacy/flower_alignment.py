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
from fedgraph.runtime.flower.federation import load_federation

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
            "This run aligns entities privately (run config "
            "`privacy.private-alignment`), so every client SuperNode needs the "
            'federation secret: --node-config "partition-id=K '
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
    r"""A node's alignment reply. With private alignment: its partition id,
    the number of clients and its entities' keyed tokens (no vocabulary size,
    no global id: the server sizes its table by the union of the tokens);
    otherwise :func:`~fedgraph.runtime.flower.alignment.describe_kge_node`'s."""
    privacy = getattr(settings, "privacy", None)
    if privacy is None or not privacy.private_alignment:
        return describe_kge_node(settings, node_config)
    from fedgraph.privacy.alignment import entity_name, entity_tokens
    from fedgraph.runtime.flower.config import partition_id
    from fedgraph.runtime.flower.protocol import PARTITION_ID

    fed = load_federation(settings.data)
    cid = partition_id(node_config, fed.num_clients)
    ids = fed.shards[cid].entity_ids.tolist()
    names = [entity_name(int(i), fed.entity_names) for i in ids]
    tokens = entity_tokens(names, node_secret(node_config))
    return {
        PARTITION_ID: cid,
        "num-clients": int(fed.num_clients),
        TOKENS_KEY: sorted(tokens.tolist()),  # type: ignore[dict-item]
    }


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
                "nodes run different run configs (`privacy.private-alignment`)"
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
        return super().merge(sized)


#: the private apps' alignment step.
PRIVATE_ALIGNMENT = PrivateAlignment()


__all__ = [
    "SECRET_KEY",
    "TOKENS_KEY",
    "node_secret",
    "describe_private_node",
    "PrivateAlignment",
    "PRIVATE_ALIGNMENT",
]
