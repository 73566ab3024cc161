r"""What every side of secure aggregation shares: the payload keys, the
pseudo-random masks expanded from an agreed key, and the codecs of keys and
client ids in a payload (arrays hold tensors, configs hold scalars).

Used by the pairwise-masking core (:mod:`fedgraph.privacy.secagg`) and by
SecAgg+'s dropout recovery, the client's side
(:mod:`fedgraph.privacy.secagg_plus`) and the server's
(:mod:`fedgraph.privacy.secagg_transport`). Key agreement is Flower's
(``generate_shared_key``); keys are on SECP384R1, as Flower's SecAgg+.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch import Tensor

#: the modulus :math:`M` of the masked integer sums
MODULUS = 2**32
#: a registration's arrays: the client's identity public key
PUBLIC_KEY = "secagg-public-key"
#: a masked reply's arrays: the masked vector
MASKED = "secagg-masked"
#: a masking request's config: the round the masks are expanded for
ROUND = "secagg-round"
#: a registration's config: the size of the shared index the client masks over
INDEX_SIZE = "secagg-index-size"
#: a masked reply's config: the fingerprint of the key the client masks with
KEY_ID = "secagg-key-id"
#: a masking request's arrays: prefix of each neighbour's public key
#: (``secagg-peer/<client id>``)
PEER = "secagg-peer/"


def key_id(public_key: bytes) -> int:
    r"""A public key's fingerprint (the first 7 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(public_key).digest()[:7], "big")


def mask(shared_key: bytes, server_round: int, size: int) -> Tensor:
    r"""``size`` integers in :math:`[0, M)` drawn from a generator seeded
    with the SHA-256 of ``shared_key`` and ``server_round``: the same on
    both ends of a pair, different every round."""
    seed = hashlib.sha256(shared_key + int(server_round).to_bytes(8, "big")).digest()
    gen = torch.Generator().manual_seed(int.from_bytes(seed[:8], "big") >> 1)
    return torch.randint(0, MODULUS, (size,), dtype=torch.long, generator=gen)


def pairwise_mask(private: Any, public: Any, server_round: int, size: int) -> Tensor:
    r""":func:`mask` from the key that ``private`` agrees with ``public``."""
    from flwr.common.secure_aggregation.crypto.symmetric_encryption import (
        generate_shared_key,
    )

    return mask(generate_shared_key(private, public), server_round, size)


def key_tensor(data: bytes) -> Tensor:
    r"""Bytes (a key, a share, a ciphertext) as a ``uint8`` tensor."""
    return torch.tensor(list(data), dtype=torch.uint8)


def key_bytes(t: Tensor) -> bytes:
    r"""The bytes of a :func:`key_tensor`."""
    return bytes(t.to(torch.uint8).tolist())


def public_bytes(private: Any) -> bytes:
    r"""The encoded point (X9.62, uncompressed) of a private key's public
    key: what a client uploads."""
    from cryptography.hazmat.primitives import serialization

    return private.public_key().public_bytes(
        serialization.Encoding.X962,
        serialization.PublicFormat.UncompressedPoint,
    )


def public_key(data: bytes) -> Any:
    r"""A SECP384R1 public key from its encoded point."""
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP384R1(), data)


def private_key_pem(key: Any) -> bytes:
    r"""A private key as unencrypted PKCS8 PEM."""
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def private_key(pem: bytes) -> Any:
    r"""The private key of a :func:`private_key_pem`."""
    from cryptography.hazmat.primitives import serialization

    return serialization.load_pem_private_key(pem, password=None)


def format_ids(ids: Iterable[Any]) -> str:
    r"""Client ids as a config value (configs hold scalars)."""
    return ",".join(str(int(i)) for i in ids)


def parse_ids(value: Any) -> list[int]:
    r"""The client ids of a :func:`format_ids` value."""
    return [int(i) for i in str(value).split(",") if i]


def keyed(arrays: Mapping[str, Tensor], prefix: str) -> dict[int, bytes]:
    r"""The arrays named ``prefix<client id>``, as bytes by client id."""
    return {
        int(k[len(prefix) :]): key_bytes(v)
        for k, v in arrays.items()
        if k.startswith(prefix)
    }


__all__ = [
    "MODULUS",
    "PUBLIC_KEY",
    "MASKED",
    "ROUND",
    "INDEX_SIZE",
    "KEY_ID",
    "PEER",
    "key_id",
    "mask",
    "pairwise_mask",
    "key_tensor",
    "key_bytes",
    "public_bytes",
    "public_key",
    "private_key_pem",
    "private_key",
    "format_ids",
    "parse_ids",
    "keyed",
]
