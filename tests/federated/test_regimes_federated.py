r"""The training regimes in the federated KGE clients: what each strategy
uploads is the same under every regime, and the strategies that cannot
train under one say so."""

import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.runtime import run_simulation

pytestmark = pytest.mark.usefixtures("one_thread")

REGIMES = [
    ("negative-sampling", {}),
    ("1vsall", {"reciprocal": True, "regularizer": "n3", "regularizer_weight": 0.01}),
    ("kvsall", {"label_smoothing": 0.1, "entity_dropout": 0.2}),
    ("negative-sampling", {"reciprocal": True, "regularizer": "l2",
                           "regularizer_weight": 0.01}),
]  # fmt: skip


def _uploads(algorithm, regime, kwargs):
    settings = KGESettings(
        model="complex", dim=4, lr=0.01, batch_size=16, num_negatives=4,
        local_epochs=1, gamma=4.0, regime=regime, regime_kwargs=kwargs,
    )  # fmt: skip
    strategy, clients = build_kge_federation(algorithm, toy_federation(), settings)
    seen = []
    for c, cl in clients.items():

        def fit(payload, _fit=cl.fit, c=c):
            reply = _fit(payload)
            seen.append((
                c,
                {k: tuple(v.shape) for k, v in reply.arrays.items()},
                {k: v.tolist() for k, v in reply.row_ids.items()},
                sorted(reply.metrics),
                reply.num_examples,
            ))  # fmt: skip
            return reply

        cl.fit = fit
    res = run_simulation(
        strategy, clients, num_rounds=2, eval_every=1, patience=0, progress=False
    )
    return seen, res


@pytest.mark.parametrize(
    "algorithm", ["fede", "fedprox", "fedec", "feds", "fedadam", "fedavgm", "fedyogi"]
)
def test_each_strategy_uploads_the_same_under_every_regime(algorithm, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    reference, _ = _uploads(algorithm, *REGIMES[0])
    assert len(reference) == 4  # two clients, two rounds
    for regime, kwargs in REGIMES[1:]:
        seen, res = _uploads(algorithm, regime, kwargs)
        assert seen == reference, (regime, kwargs)
        assert all(
            torch.isfinite(torch.tensor(h["train"]["loss"])) for h in res.history
        )


def test_fedlu_uploads_the_same_under_the_all_entity_regimes(monkeypatch):
    # FedLU distils over all entities under 1-vs-all / k-vs-all
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    reference, _ = _uploads("fedlu", *REGIMES[0])
    for regime, kwargs in REGIMES[1:3]:
        seen, res = _uploads("fedlu", regime, kwargs)
        assert seen == reference, (regime, kwargs)
        losses = [h["train"]["loss"] for h in res.history]
        assert all(torch.isfinite(torch.tensor(losses)))


def test_fedlu_refuses_negative_sampling_variants():
    settings = KGESettings(dim=4, regime_kwargs={"reciprocal": True})
    with pytest.raises(ValueError, match="FedLU's mutual distillation trains with"):
        build_kge_federation("fedlu", toy_federation(), settings)


def test_settings_check_the_regime_early():
    with pytest.raises(ValueError, match="Could not resolve 'mvsall'"):
        KGESettings(regime="mvsall")
    with pytest.raises(ValueError, match=r"`label_smoothing` must be in \[0, 1\)"):
        KGESettings(regime="kvsall", regime_kwargs={"label_smoothing": 2})
