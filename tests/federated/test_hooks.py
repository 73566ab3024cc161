r"""The two hooks: client-side loss terms and the server-side update."""

import ast
import copy
from pathlib import Path

import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.federated import FedE, Payload
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.kge.fedec import ContrastiveTerm
from fedgraph.federated.kge.fedprox import ProximalTerm
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.federated.loss_terms import LOSS_TERMS, LossTerm, active_terms
from fedgraph.federated.rgcn.terms import (
    AlignmentTerm,
    BasesProximalTerm,
    LipschitzTerm,
)

ALGORITHM_MODULES = {
    "fedgraph.federated.fedprox",
    "fedgraph.federated.kge.fedprox",
    "fedgraph.federated.kge.fedec",
    "fedgraph.federated.rgcn.fedalign",
    "fedgraph.federated.rgcn.terms",
    "fedgraph.federated.rgcn.ot",
    "fedgraph.federated.rgcn.lipschitz",
}


@pytest.mark.parametrize("family", ["kge", "rgcn"])
def test_the_generic_client_names_no_algorithm(family):
    src = Path(__file__).parents[2] / "fedgraph" / "federated" / family / "client.py"
    tree = ast.parse(src.read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & ALGORITHM_MODULES
    strings = {
        n.value.lower()
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    keys = ("proximal-mu", "contrastive-mu", "fedalign-mu", "lipschitz-lambda")
    assert not {k for k in keys if any(k in s for s in strings)}


def test_terms_switch_on_from_the_config():
    received, previous = torch.rand(4, 3), torch.rand(4, 3)
    assert active_terms({}, received, previous) == []
    terms = active_terms({"proximal-mu": 0.1}, received, previous)
    assert [type(t) for t in terms] == [ProximalTerm]
    terms = active_terms({"contrastive-mu": 0.3}, received, None)
    assert [type(t) for t in terms] == [ContrastiveTerm]


def test_rgcn_terms_switch_on_from_the_config():
    bases = {"conv1.weight": torch.rand(2, 3)}
    peer = {"peer0/conv1.weight": torch.rand(2, 3)}
    cfg = {"proximal-mu": 1.0, "fedalign-mu": 10.0, "lipschitz-lambda": 2.0}
    terms = active_terms(cfg, {**bases, **peer}, family="rgcn")
    assert [type(t) for t in terms] == [BasesProximalTerm, AlignmentTerm, LipschitzTerm]
    assert [t.weight for t in terms] == [0.5, 10.0, 2.0]
    assert terms[2].clip is None and terms[2].own_gradient
    # no bases received (separated training): no proximal term; no peers: no OT
    terms = active_terms(cfg, {}, family="rgcn")
    assert [type(t) for t in terms] == [LipschitzTerm]
    # the KGE terms stay with the KGE client, and the reverse
    assert active_terms({"contrastive-mu": 0.3}, bases, family="rgcn") == []
    kge = active_terms(cfg, torch.rand(4, 3), torch.rand(4, 3))
    assert [type(t) for t in kge] == [ProximalTerm]


def test_bases_proximal_term_by_hand():
    class _Model:
        def bases(self):
            return {"a": torch.tensor([1.0, 2.0]), "b": torch.tensor([3.0])}

    received = {"a": torch.tensor([0.0, 0.0]), "peer0/a": torch.ones(2)}
    (term,) = active_terms({"proximal-mu": 0.4}, received, family="rgcn")
    assert float(term(_Model())) == 5.0  # (1 + 4); "b" was not received
    assert term.weight == pytest.approx(0.2)


class _Pull(LossTerm):
    # pulls every entity row towards zero with weight config["pull"]
    @classmethod
    def from_config(cls, config, received, previous):
        return cls() if config.get("pull") else None

    def __call__(self, model):
        return 1e3 * model.entity_embedding.weight.pow(2).sum()


def test_a_registered_term_reaches_every_kge_client():
    fed = toy_federation()
    _, clients = build_kge_federation("fede", fed, KGESettings(dim=4, lr=0.01))
    strategy, _ = build_kge_federation("fede", fed, KGESettings(dim=4))
    strategy.register({c: cl.register() for c, cl in clients.items()})
    payload = strategy.configure_train(1, [0])[0]
    payload.config["pull"] = True
    twin = copy.deepcopy(clients[0])
    plain = twin.fit(payload).arrays["entity"]
    LOSS_TERMS.append(_Pull)
    try:
        pulled = clients[0].fit(payload).arrays["entity"]
        # the same steps, each also pulling towards zero (Adam: <= lr = 0.01
        # per entry and step, 6 steps: 3 local epochs x 2 corruption modes)
        shrink = (plain.abs() - pulled.abs()).mean()
        assert 0.02 < shrink <= 2 * 6 * 0.01
    finally:
        LOSS_TERMS.remove(_Pull)


class _Recording(FedE):
    def server_update(self, server_round, key, aggregated, index=None):
        self.calls.append((key, index.clone(), aggregated.clone()))
        super().server_update(server_round, key, aggregated, index)


def test_server_update_gets_only_the_received_rows():
    s = _Recording(5, 2, init_range=1.0)
    s.calls = []
    s.register({0: Payload(row_ids={"entity": torch.tensor([0, 2])}),
                1: Payload(row_ids={"entity": torch.tensor([2, 3])})})  # fmt: skip
    before = s.table.clone()
    rows = {0: torch.ones(2, 2), 1: 3 * torch.ones(2, 2)}
    ids = {0: torch.tensor([0, 2]), 1: torch.tensor([2, 3])}
    s.aggregate_train(
        1,
        {c: Payload(arrays={"entity": rows[c]}, row_ids={"entity": ids[c]})
         for c in rows},
    )  # fmt: skip
    key, index, agg = s.calls[0]
    assert key == "entity" and index.tolist() == [0, 2, 3]
    assert agg[:, 0].tolist() == [1.0, 2.0, 3.0]
    assert torch.equal(s.table[[1, 4]], before[[1, 4]])  # not received: kept
    assert s.table[:, 0].tolist()[0] == 1.0 and s.table[2, 0] == 2.0


def test_fedavg_goes_through_the_same_hook():
    class Halve(FedAvg):
        def server_update(self, server_round, key, aggregated, index=None):
            x = self.arrays[key]
            super().server_update(server_round, key, x + 0.5 * (aggregated - x))

    s = Halve({"w": torch.zeros(2)})
    s.aggregate_train(1, {0: Payload(arrays={"w": torch.ones(2)}, num_examples=1)})
    assert s.arrays["w"].tolist() == [0.5, 0.5]
