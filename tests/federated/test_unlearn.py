import pytest
import torch
from fedlu_toy import toy_federation, toy_model

from fedgraph.federated.kge.fedlu import FedLU, FedLUClient
from fedgraph.federated.unlearning.forget import ForgetRequestError
from fedgraph.federated.unlearning.retrain import retrain
from fedgraph.federated.unlearning.unlearn import (
    evaluate_forgetting,
    propagate,
    unlearn_federation,
)
from fedgraph.runtime.simulation import run_simulation


@pytest.fixture(scope="module")
def trained():
    torch.manual_seed(0)
    fed = toy_federation(n_train=60)
    clients = {
        s.client_id: FedLUClient(
            s,
            toy_model(s, dim=16),
            batch_size=32,
            num_negatives=8,
            local_epochs=5,
            lr=0.05,
            seed=0,
        )
        for s in fed
    }
    strategy = FedLU(12, 16, init_range=0.5)
    run_simulation(
        strategy,
        clients,
        num_rounds=4,
        eval_every=4,
        patience=0,
        progress=False,
        test=False,
    )
    return fed, strategy, clients


def _scores(cl, triples):
    with torch.no_grad():
        h, r, t = triples.unbind(1)
        return cl.model.score_hrt(h, r, t), cl.global_model.score_hrt(h, r, t)


def test_forgetting_lowers_forgotten_scores_and_keeps_the_rest(trained):
    fed, strategy, clients = trained
    cl = clients[0]
    train = fed[0].graph.triples("train")
    forget, rest = train[:4], train[4:]
    f_loc0, f_glob0 = _scores(cl, forget)
    r_loc0, r_glob0 = _scores(cl, rest)
    other0 = _scores(clients[1], fed[1].graph.triples("train"))[0]
    raw = evaluate_forgetting(clients, {0: forget})
    log = unlearn_federation(
        strategy, clients, {0: forget}, rounds=0, epochs=8, decay_epochs=2
    )
    f_loc1, f_glob1 = _scores(cl, forget)
    r_loc1, r_glob1 = _scores(cl, rest)
    # the forgotten triples' scores drop, for the local and the global model
    assert (f_loc1 < f_loc0).all() and (f_glob1 < f_glob0).all()
    drop = (f_loc0 - f_loc1).mean()
    # the retained triples move much less (within a tolerance of the drop)
    assert (r_loc1 - r_loc0).abs().mean() < 0.5 * drop
    assert (r_glob1 - r_glob0).abs().mean() < 0.5 * (f_glob0 - f_glob1).mean()
    # the other client's local model is untouched
    assert torch.equal(_scores(clients[1], fed[1].graph.triples("train"))[0], other0)
    # forgotten triples are no longer trained on
    assert cl.train_triples.size(0) == train.size(0) - 4
    after = evaluate_forgetting(clients, {0: forget})
    assert after["local"]["forget"]["mrr"] < raw["local"]["forget"]["mrr"]
    assert set(after) == {"local", "global"} and set(after["local"]) == {
        "forget",
        "test",
    }
    assert log["clients"][0]["n_forget"] == 4 and log["clients"][0]["decay_epochs"] >= 1
    # rounds=0 propagation: every client holds its rows of the server's mean
    for c, other in clients.items():
        rows = strategy.table[fed[c].entity_ids]
        assert torch.allclose(
            other.global_table.detach(), rows.to(other.global_table.dtype)
        )
    # one propagation round trains on the retained set only
    n_before = cl.train_triples.size(0)
    propagate(strategy, clients, rounds=1)
    assert cl.train_triples.size(0) == n_before


def test_request_outside_training_set_is_rejected(trained):
    fed, strategy, clients = trained
    valid = fed[1].graph.triples("valid")[:1]
    with pytest.raises(ForgetRequestError, match="not in client 1's training set"):
        unlearn_federation(strategy, clients, {1: valid}, epochs=1, decay_epochs=1)


def test_retrain_resumes_from_its_checkpoints_with_identical_numbers(tmp_path):
    fed = toy_federation()
    forget = {0: fed[0].graph.triples("train")[:3]}
    kw = dict(dim=8, gamma=4.0, lr=0.05, batch_size=16, num_negatives=4)
    kw.update(eval_every=1, patience=10)
    full = retrain(fed, forget, max_epochs=3, **kw)
    retrain(fed, forget, max_epochs=1, checkpoint_dir=tmp_path, **kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "global.pt",
        "local0.pt",
        "local1.pt",
        "settings.json",
    ]
    rest = retrain(fed, forget, max_epochs=3, checkpoint_dir=tmp_path, **kw)
    assert rest["epochs"] == full["epochs"] == {"local": [3, 3], "global": 3}
    for which in ("local", "global"):
        assert rest[which] == full[which]
    # checkpoints of another forget set are not resumed silently
    other = {0: fed[0].graph.triples("train")[3:6]}
    with pytest.raises(ValueError, match="forget"):
        retrain(fed, other, max_epochs=3, checkpoint_dir=tmp_path, **kw)
    # resume=False starts afresh: the same numbers as an uninterrupted run
    again = retrain(
        fed, forget, max_epochs=3, checkpoint_dir=tmp_path, resume=False, **kw
    )
    assert again["local"] == full["local"]
