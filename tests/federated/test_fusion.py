import pytest
import torch

from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.models.fusion import ScoreFusion
from fedgraph.models.kge import TransE
from fedgraph.training.fusion import fit_fusion


def _oracle_and_noise():
    # 6 entities, 1 relation: the "single" model encodes t = h + 1 exactly,
    # the "federated" one is random noise.
    torch.manual_seed(0)
    good = TransE(6, 1, 2, gamma=0.0)
    with torch.no_grad():
        good.entity_embedding.weight.copy_(torch.arange(6.0).repeat(2, 1).t())
        good.relation_embedding.weight.fill_(1.0)
    noise = TransE(6, 1, 2, gamma=0.0)
    with torch.no_grad():
        noise.entity_embedding.weight.mul_(10)
    triples = torch.tensor([[i, 0, i + 1] for i in range(5)])
    return good, noise, triples


def test_fusion_scores_are_the_linear_combination():
    good, noise, triples = _oracle_and_noise()
    f = ScoreFusion(good, noise)
    with torch.no_grad():
        f.linear.weight.copy_(torch.tensor([[2.0, -0.5]]))
        f.linear.bias.fill_(0.25)
    h, r = triples[:, 0], triples[:, 1]
    expected = 2.0 * good.score_t(h, r) - 0.5 * noise.score_t(h, r) + 0.25
    torch.testing.assert_close(f.score_t(h, r), expected)
    assert "w_single=2.000" in repr(f)


def test_fit_fusion_learns_to_trust_the_better_model():
    good, noise, triples = _oracle_and_noise()
    f = ScoreFusion(good, noise)
    fit_fusion(f, triples, epochs=40, batch_size=5, num_negatives=5, lr=0.2)
    w = f.linear.weight.detach().view(-1)
    assert w[0] > w[1]
    flt = TripleFilter(triples, 6, 1)
    mrr = rank_triples(f, triples, filter=flt, directions=("tail",)).compute()["mrr"]
    assert mrr == pytest.approx(1.0)
    # the frozen models did not move
    assert not any(p.requires_grad for p in good.parameters())


def test_fusion_rejects_mismatched_models():
    with pytest.raises(ValueError, match="must share entities"):
        ScoreFusion(TransE(5, 1, 2), TransE(6, 1, 2))


def _toy_clients():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fedlu_toy import toy_federation, toy_model

    from fedgraph.federated.kge.client import KGEClient

    fed = toy_federation()
    return {s.client_id: KGEClient(s, toy_model(s)) for s in fed}


def test_fuse_and_evaluate_ranks_each_model_as_the_client_does():
    import copy

    from fedgraph.eval.metrics import LinkPredState
    from fedgraph.federated.payload import Payload
    from fedgraph.training.fusion import fuse_and_evaluate

    clients = _toy_clients()
    single = {c: copy.deepcopy(cl.model) for c, cl in clients.items()}
    torch.manual_seed(5)
    federated = {
        c: type(m)(m.num_entities, m.num_relations, 8, gamma=4.0)
        for c, m in single.items()
    }
    fed_mrr = {
        c: clients[c].evaluate(Payload(config={"split": "test"})).metrics
        for c in clients
    }  # the client's own model = the single one here
    res = fuse_and_evaluate(
        clients, single, federated, epochs=2, batch_size=8, num_negatives=4
    )
    states = []
    for row in res["clients"]:
        c = row["client"]
        own = LinkPredState.from_dict(
            {k: v for k, v in fed_mrr[c].items() if "/" in k}
        ).compute()
        assert row["single"]["mrr"] == own["mrr"]
        assert row["n_test"] == clients[c].shard.graph.num_triples("test")
        s = rank_triples(
            federated[c],
            clients[c].shard.graph.triples("test"),
            filter=clients[c].filter,
        )
        assert row["federated"]["mrr"] == s.compute()["mrr"]
        states.append(s)
    assert res["weighted_federated"] == LinkPredState.merged(states).compute()
    with pytest.raises(ValueError, match=r"clients \[1\]"):
        fuse_and_evaluate(clients, {0: single[0]}, federated)


def test_fusing_a_model_with_itself_ranks_as_the_model():
    # positive weights on two equal scores keep the ranking: fused = single
    import copy

    from fedgraph.training.fusion import fuse_and_evaluate

    clients = _toy_clients()
    single = {c: copy.deepcopy(cl.model) for c, cl in clients.items()}
    twin = {c: copy.deepcopy(cl.model) for c, cl in clients.items()}
    res = fuse_and_evaluate(
        clients, single, twin, epochs=1, batch_size=8, num_negatives=4, lr=1e-3
    )
    for row in res["clients"]:
        assert row["fusion"]["w_single"] + row["fusion"]["w_federated"] > 0
        for key in ("mrr", "hits@1", "hits@10"):
            assert row[key] == row["single"][key] == row["federated"][key]


def test_evaluation_model_carries_the_payload_rows():
    from fedgraph.federated.kge.fede import ENTITY
    from fedgraph.federated.payload import Payload

    client = _toy_clients()[0]
    ids = client.shard.entity_ids[:2]
    rows = torch.full((2, client.table.size(1)), 0.5)
    before = client.table.detach().clone()
    model = client.evaluation_model(
        Payload(arrays={ENTITY: rows}, row_ids={ENTITY: ids})
    )
    torch.testing.assert_close(model.entity_embedding.weight[:2].detach(), rows)
    torch.testing.assert_close(model.entity_embedding.weight[2:].detach(), before[2:])
    torch.testing.assert_close(client.table.detach(), before)  # a copy
    # evaluating with the payload scores that model, and restores the table
    pay = Payload(
        arrays={ENTITY: rows}, row_ids={ENTITY: ids}, config={"split": "test"}
    )
    got = client.evaluate(pay).metrics
    want = rank_triples(
        model, client.shard.graph.triples("test"), filter=client.filter
    ).to_dict()
    assert {k: got[k] for k in want} == want
    torch.testing.assert_close(client.table.detach(), before)


def test_zero_epochs_is_the_plain_sum_of_the_scores():
    import math

    good, noise, triples = _oracle_and_noise()
    f = ScoreFusion(good, noise)
    assert math.isnan(fit_fusion(f, triples, epochs=0))
    h, r = triples[:, 0], triples[:, 1]
    torch.testing.assert_close(
        f.score_t(h, r), good.score_t(h, r) + noise.score_t(h, r)
    )


@pytest.mark.parametrize("model", ["rotate", "transe"])
def test_fit_fusion_score_tables_equal_scoring_through_the_models(model, monkeypatch):
    # the precomputed score tables give the negatives, losses and fitted
    # layer of scoring every step's negatives through the two frozen models
    import fedgraph.training.fusion as fusion_mod
    from fedgraph.models.kge import resolve_model

    def fitted(table_bytes):
        monkeypatch.setattr(fusion_mod, "SCORE_TABLE_BYTES", table_bytes)
        torch.manual_seed(0)
        a = resolve_model(model, 30, 4, 8, gamma=6.0)
        b = resolve_model(model, 30, 4, 8, gamma=6.0)
        g = torch.Generator().manual_seed(1)
        triples = torch.stack(
            [
                torch.randint(0, 30, (50,), generator=g),
                torch.randint(0, 4, (50,), generator=g),
                torch.randint(0, 30, (50,), generator=g),
            ],
            1,
        )
        f = ScoreFusion(a, b)
        assert (fusion_mod._score_tables(f, triples, ("tail-batch",)) is None) == (
            table_bytes == 0
        )
        loss = fit_fusion(
            f, triples, epochs=5, batch_size=16, num_negatives=7, lr=0.1, margin=3.0
        )
        return loss, torch.cat([f.linear.weight.view(-1), f.linear.bias]).detach()

    default = fusion_mod.SCORE_TABLE_BYTES
    direct = fitted(0)
    tabled = fitted(default)
    assert tabled[0] == pytest.approx(direct[0], rel=1e-5)
    torch.testing.assert_close(tabled[1], direct[1], rtol=1e-5, atol=1e-6)
    assert not torch.equal(direct[1], torch.tensor([1.0, 1.0, 0.0]))  # it trained


@pytest.mark.parametrize("table_bytes", [0, None])
def test_fit_fusion_moves_the_progress_bar(table_bytes, monkeypatch):
    # `fedgraph fuse`'s bar moves while a layer is fitted: one step per batch
    # (as training) and, with score tables, one per query scored into them
    import fedgraph.training.fusion as fusion_mod
    from fedgraph.progress import progress_bar

    if table_bytes is not None:
        monkeypatch.setattr(fusion_mod, "SCORE_TABLE_BYTES", table_bytes)
    good, noise, triples = _oracle_and_noise()  # 5 triples
    with progress_bar("fuse") as bar:
        fit_fusion(ScoreFusion(good, noise), triples, epochs=3, batch_size=2)
        tabled = 2 * 5 if table_bytes is None else 0  # both modes, 5 queries each
        assert bar.n == 3 * 3 + tabled  # 3 batches an epoch
