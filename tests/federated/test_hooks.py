r"""The two hooks: client-side loss terms and the server-side update."""

import ast
import copy
from pathlib import Path

import torch
from fedlu_toy import toy_federation

from fedgraph.federated import FedE, Payload
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.kge.fedec import ContrastiveTerm
from fedgraph.federated.kge.fedprox import ProximalTerm
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.federated.loss_terms import LOSS_TERMS, LossTerm, active_terms


def test_the_generic_client_names_no_algorithm():
    src = Path(__file__).parents[2] / "fedgraph" / "federated" / "kge" / "client.py"
    imported = {
        node.module
        for node in ast.walk(ast.parse(src.read_text()))
        if isinstance(node, ast.ImportFrom)
    }
    assert not imported & {"fedgraph.federated.fedprox", "fedgraph.federated.kge.fedec"}


def test_terms_switch_on_from_the_config():
    received, previous = torch.rand(4, 3), torch.rand(4, 3)
    assert active_terms({}, received, previous) == []
    terms = active_terms({"proximal-mu": 0.1}, received, previous)
    assert [type(t) for t in terms] == [ProximalTerm]
    terms = active_terms({"contrastive-mu": 0.3}, received, None)
    assert [type(t) for t in terms] == [ContrastiveTerm]


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
