r"""SecAgg+ dropout recovery (:mod:`fedgraph.privacy.secagg_plus`) on the
toy federation, in process: a client lost after setting up a round leaves
the sum of the survivors, FedE's aggregate over them up to the quantisation."""

import pytest
import torch
from privacy_toy import build, toy_federation

from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.privacy import secagg_plus as plus
from fedgraph.privacy.secagg import SecAggClient, SecAggStrategy
from fedgraph.privacy.secagg_masks import (
    MASKED,
    MODULUS,
    PEER,
    keyed,
    mask,
    pairwise_mask,
    private_key,
    public_key,
)
from fedgraph.privacy.secagg_transport import SecAggTransport
from fedgraph.runtime.loop import LoopSettings, run_federation
from fedgraph.runtime.transport import InProcessTransport

pytest.importorskip("flwr")
ROUNDS = 3


class Losing(InProcessTransport):
    r"""Loses client ``lose`` in round ``at`` after it trained (its training
    reply never arrives), and any client in ``mute`` in the unmask stage."""

    def __init__(self, clients, lose=None, at=2, mute=()):
        super().__init__(clients)
        self.lose, self.at, self.mute = lose, at, set(mute)
        self.lost_events = []

    def fit(self, server_round, payloads):
        out = super().fit(server_round, payloads)
        stage = next(iter(payloads.values())).config.get(plus.STAGE)
        if stage == plus.UNMASK:
            return {c: r for c, r in out.items() if c not in self.mute}
        if stage is None and server_round == self.at and self.lose in out:
            self.lost_events.append(self.lose)
            del out[self.lose]
        return out


def _federation(secure, threshold=2, neighbours=None):
    strategy, clients = build(toy_federation())
    if secure:
        strategy = SecAggStrategy(strategy, neighbours, threshold=threshold)
        clients = {c: SecAggClient(v, 15) for c, v in clients.items()}
    return strategy, clients


def _run(strategy, transport, rounds=ROUNDS):
    settings = LoopSettings(num_rounds=rounds, eval_every=1, patience=0, test=False)
    return run_federation(strategy, transport, settings)


def _tables(secure_transport, plain_transport_args):
    s, c = _federation(True)
    res = _run(s, SecAggTransport(secure_transport(c), s))
    p, pc = _federation(False)
    ref = _run(p, plain_transport_args(pc))
    return s, res, p, ref


def test_recovery_without_losses_equals_fede():
    s, res, p, ref = _tables(InProcessTransport, InProcessTransport)
    assert torch.allclose(s.table, p.table, atol=1e-5)
    curve = [h["valid"]["mrr"] for h in res.history]
    assert curve == pytest.approx([h["valid"]["mrr"] for h in ref.history], abs=1e-4)
    # three exchanges a round, all counted: setup and unmask replies ride on
    # the training replies, the relayed keys and ciphertexts on the requests
    assert res.comm["params_up"] > ref.comm["params_up"]


def test_a_client_lost_mid_round_leaves_the_survivors_sum():
    # client 1 trains in round 2 but its masked vector never arrives: the
    # survivors' sum is recovered, FedE's aggregate over clients 0 and 2
    s, res, p, ref = _tables(lambda c: Losing(c, lose=1), lambda c: Losing(c, lose=1))
    assert s.survivors == [0, 1, 2]  # round 3: everyone back
    assert torch.allclose(s.table, p.table, atol=1e-5)
    assert [h["clients"] for h in res.history] == [[0, 1, 2]] * ROUNDS
    curve = [h["valid"]["mrr"] for h in res.history]
    assert curve == pytest.approx([h["valid"]["mrr"] for h in ref.history], abs=1e-4)


def test_unmasking_needs_threshold_shares():
    # client 1 lost, and client 2 silent in the unmask stage: one share of
    # client 1's round key (client 0's) is below the threshold 2
    s, c = _federation(True)
    with pytest.raises(PayloadError, match="fewer than the threshold 2"):
        _run(s, SecAggTransport(Losing(c, lose=1, mute={2}), s))


def test_a_client_never_reveals_both_shares_of_one_client():
    s, c = _federation(True)
    transport = SecAggTransport(InProcessTransport(c), s)
    _run(s, transport, rounds=1)
    client = c[0]
    # a crafted request naming client 2 survivor and lost in one round
    client.round_state = {"round": 5, "key": b"", "seed": b"", "own": {},
                          "received": {}, "identities": {}}  # fmt: skip
    bad = Payload(
        config={plus.STAGE: plus.UNMASK, "secagg-round": 5,
                plus.SURVIVORS: "2", plus.LOST: "2"},
    )  # fmt: skip
    with pytest.raises(PayloadError, match="both survivor and lost"):
        client.fit(bad)


def test_a_recovered_round_key_leaves_the_input_hidden_by_its_self_mask():
    # A server that declared client 0 lost rebuilds its round key; if client
    # 0's masked vector then arrives late, removing its pairwise masks leaves
    # input + self-mask: uniform, not the input (which only the self-mask
    # seed, never revealed for a lost client, would expose).
    s, c = _federation(True)
    seen = {}

    class Spy(InProcessTransport):
        def fit(self, rnd, payloads):
            out = super().fit(rnd, payloads)
            if next(iter(payloads.values())).config.get(plus.RECOVERY):
                seen["masked"] = out[0].arrays[MASKED]
                seen["state"] = dict(self.clients[0].round_state)
                seen["peers"] = keyed(payloads[0].arrays, PEER)
            return out

    _run(s, SecAggTransport(Spy(c), s), rounds=1)
    y, state = seen["masked"], seen["state"]
    key, size = private_key(state["key"]), y.numel()
    pairwise = torch.zeros(size, dtype=torch.long)
    assert sorted(seen["peers"]) == [1, 2]  # client 0 added +m for each (0 < j)
    for pk in seen["peers"].values():
        pairwise += pairwise_mask(key, public_key(pk), 1, size)
    unpaired = torch.remainder(y - pairwise, MODULUS)
    presence = lambda v: v.view(15, 9)[:, 8]  # noqa: E731  (dim 8 + 1)
    assert not torch.isin(presence(unpaired), torch.tensor([0, 1])).all()
    assert (unpaired > 2**24).float().mean() > 0.9  # uniform on [0, 2^32)
    # with the self-mask seed too: client 0's quantised rows and presence bits
    x = torch.remainder(unpaired - mask(state["seed"], 1, size), MODULUS)
    assert presence(x).tolist() == [1] * 9 + [0] * 6
    assert int(x.max()) <= 2**24


def test_threshold_settings_are_checked():
    strategy, _ = build(toy_federation())
    with pytest.raises(ValueError, match="at least 2"):
        SecAggStrategy(strategy, threshold=1)
    # 3 clients: each holds shares of itself and its 2 neighbours; 4 fails
    s, c = _federation(True, threshold=4, neighbours=1)
    with pytest.raises(ValueError, match="exceeds client"):
        _run(s, SecAggTransport(InProcessTransport(c), s), rounds=1)


@pytest.mark.parametrize("threshold", [0, 2])
def test_a_client_with_a_key_it_did_not_register_stops_the_round(threshold):
    # a node restarted without its state draws a new key: masks agreed with
    # the registered one would not cancel, so the server refuses its reply
    from cryptography.hazmat.primitives.asymmetric import ec

    s, c = _federation(True, threshold=threshold)

    class Restarting(InProcessTransport):
        def fit(self, rnd, payloads):
            if rnd == 2:
                c[1].identity_key = ec.generate_private_key(ec.SECP384R1())
            return super().fit(rnd, payloads)

    inner = Restarting(c)
    transport = SecAggTransport(inner, s) if threshold else inner
    with pytest.raises(PayloadError, match="round 2: client 1 uses a key it did not"):
        _run(s, transport)
