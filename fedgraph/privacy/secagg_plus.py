r"""Dropout recovery for secure aggregation: SecAgg+'s per-round keys,
self-masks and Shamir shares (Bell et al., CCS 2020), on top of the masked
sums of :mod:`fedgraph.privacy.secagg`.

With a threshold :math:`t > 0` (``SecAggStrategy(..., threshold=t)``, run
config ``privacy.secagg-threshold``), a training round is three exchanges of
``"train"`` messages, driven by
:class:`~fedgraph.privacy.secagg_transport.SecAggTransport` (this module
holds the client's side):

1. *Setup*: each participant :math:`i` draws a fresh key pair
   :math:`s_i` for this round's pairwise masks and a self-mask seed
   :math:`b_i`, splits both into Shamir shares (threshold :math:`t`) for its
   share holders (itself and its neighbours in the ring graph), encrypts
   each share for its holder under the key it agrees with the holder from
   their registered identity keys, and uploads its round public key and the
   ciphertexts. The server relays each client its neighbours' round public
   keys and the ciphertexts addressed to it.
2. *Masked input*: as without recovery, plus the self-mask
   :math:`\mathrm{PRG}(b_i)`; the pairwise masks come from the round keys.
3. *Unmask*: the server names the survivors (who sent a masked vector) and
   the lost; each survivor returns, for every client whose shares it holds,
   the share of :math:`b_j` if :math:`j` survived, of :math:`s_j` if
   :math:`j` was lost, never both. With :math:`t` shares the server rebuilds
   each survivor's self-mask and each lost client's round key, removes the
   self-masks and the lost clients' pairwise masks with the survivors, and is
   left with the sum of the survivors' inputs.

The server, colluding with fewer than :math:`t` clients, learns nothing but
that sum: a late masked vector of a client declared lost still hides behind
its self-mask, and a round key is used for one round only. Shares, key
agreement and encryption are Flower's (``create_shares``/``combine_shares``,
``generate_shared_key``, ``encrypt``/``decrypt``).
"""

from __future__ import annotations

import secrets
from typing import Any

from torch import Tensor

from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.privacy.secagg_masks import (
    KEY_ID,
    PEER,
    ROUND,
    key_id,
    key_tensor,
    keyed,
    mask,
    pairwise_mask,
    parse_ids,
    private_key,
    private_key_pem,
    public_bytes,
    public_key,
)

STAGE = "secagg-stage"
SETUP = "setup"
UNMASK = "unmask"
THRESHOLD = "secagg-threshold"
#: config flag of a masked-input request in a round with recovery
RECOVERY = "secagg-recovery"
#: prefix of the setup and unmask replies added to a training reply
STAGE_REPLIES = "secagg-stage-replies/"
HOLDERS = "secagg-holders"
SURVIVORS = "secagg-survivors"
LOST = "secagg-lost"
IDENTITY = "secagg-identity/"
ROUND_KEY = "secagg-round-key"
CIPHER = "secagg-cipher/"
B_SHARE = "secagg-b-share/"
SK_SHARE = "secagg-sk-share/"


# ---------------------------------------------------------------- client
def client_setup(client: Any, payload: Payload) -> Payload:
    r"""Stage 1 on client ``client`` (a :class:`SecAggClient`): a fresh
    round key and self-mask seed, shared among its holders."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from flwr.common.secure_aggregation.crypto.shamir import create_shares
    from flwr.common.secure_aggregation.crypto.symmetric_encryption import (
        encrypt,
        generate_shared_key,
    )
    from flwr.common.secure_aggregation.secaggplus_utils import (
        share_keys_plaintext_concat,
    )

    me = int(client.inner.client_id)
    holders = parse_ids(payload.config[HOLDERS])
    identities = keyed(payload.arrays, IDENTITY)
    round_key = ec.generate_private_key(ec.SECP384R1())
    seed = secrets.token_bytes(32)
    t = int(payload.config[THRESHOLD])
    b_shares = create_shares(seed, t, len(holders))
    sk_shares = create_shares(private_key_pem(round_key), t, len(holders))
    arrays = {ROUND_KEY: key_tensor(public_bytes(round_key))}
    own: dict[int, bytes] = {}
    for h, b, sk in zip(holders, b_shares, sk_shares, strict=True):
        plain = share_keys_plaintext_concat(me, h, b, sk)
        if h == me:
            own[me] = plain
            continue
        key = generate_shared_key(client.identity_key, public_key(identities[h]))
        arrays[f"{CIPHER}{h}"] = key_tensor(encrypt(key, plain))
    client.round_state = {
        "round": int(payload.config[ROUND]),
        "key": private_key_pem(round_key),
        "seed": seed,
        "own": own,
        "received": {},
    }
    return Payload(
        arrays=arrays, config={KEY_ID: key_id(public_bytes(client.identity_key))}
    )


def client_round_masks(client: Any, payload: Payload, size: int) -> Tensor:
    r"""Stage 2's self-mask and pairwise masks from the round key (and the
    ciphertexts addressed to the client kept for stage 3)."""
    state = client.round_state
    rnd = int(payload.config[ROUND])
    if state is None or state["round"] != rnd:
        raise PayloadError(
            f"SecAgg client {client.inner.client_id}: round {rnd}'s masked input "
            "without its setup"
        )
    state["received"] = keyed(payload.arrays, CIPHER)
    state["identities"] = keyed(payload.arrays, IDENTITY)
    me = int(client.inner.client_id)
    total = mask(state["seed"], rnd, size)
    key = private_key(state["key"])
    for j, pk in keyed(payload.arrays, PEER).items():
        pair = pairwise_mask(key, public_key(pk), rnd, size)
        total = total + pair if me < j else total - pair
    return total


def client_unmask(client: Any, payload: Payload) -> Payload:
    r"""Stage 3: the share of :math:`b_j` for each survivor :math:`j`, of
    :math:`s_j` for each lost one, among the clients whose shares it holds."""
    from flwr.common.secure_aggregation.crypto.symmetric_encryption import (
        decrypt,
        generate_shared_key,
    )
    from flwr.common.secure_aggregation.secaggplus_utils import (
        share_keys_plaintext_separate,
    )

    me = int(client.inner.client_id)
    state = client.round_state
    survivors = set(parse_ids(payload.config[SURVIVORS]))
    lost = set(parse_ids(payload.config[LOST]))
    if state is None or state["round"] != int(payload.config[ROUND]):
        raise PayloadError(f"SecAgg client {me}: an unmask request without a round")
    if survivors & lost:
        raise PayloadError(
            f"SecAgg client {me}: clients {sorted(survivors & lost)} named both "
            "survivor and lost; no share is revealed"
        )
    arrays = {}
    for j in sorted(survivors | lost):
        if j == me:
            plain = state["own"][me]
        elif j in state["received"]:
            peer = public_key(state["identities"][j])
            key = generate_shared_key(client.identity_key, peer)
            plain = decrypt(key, state["received"][j])
        else:
            continue
        src, dst, b_share, sk_share = share_keys_plaintext_separate(plain)
        if (src, dst) != (j, me):
            raise PayloadError(
                f"SecAgg client {me}: a share relayed to the wrong client"
            )
        if j in survivors:
            arrays[f"{B_SHARE}{j}"] = key_tensor(b_share)
        else:
            arrays[f"{SK_SHARE}{j}"] = key_tensor(sk_share)
    client.round_state = None  # a round's secrets serve once
    return Payload(arrays=arrays)


__all__ = ["client_setup", "client_round_masks", "client_unmask"]
