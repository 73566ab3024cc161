r"""PairRE: its score, its own hyperparameter ``p_norm``, and that the
registry, the command line, the Flower run config and the docs tables find it
with no other edit."""

import math

import pytest
import torch

from fedgraph.models.kge import models, resolve_model
from fedgraph.models.kge.pairre import PairRE


def _pairre(p_norm: float) -> PairRE:
    m = PairRE(2, 1, 2, gamma=6.0, p_norm=p_norm)
    with torch.no_grad():
        m.entity_embedding.weight.copy_(torch.tensor([[3.0, 4.0], [0.0, 2.0]]))
        m.relation_embedding.weight.copy_(torch.tensor([[1.0, 2.0, 3.0, 1.0]]))
    return m


def test_pairre_hand_computed():
    # normalised: h = (0.6, 0.8), t = (0, 1); h * r^H - t * r^T = (0.6, 0.6)
    h, r, t = torch.tensor([0]), torch.tensor([0]), torch.tensor([1])
    assert _pairre(1).score_hrt(h, r, t).item() == pytest.approx(6.0 - 1.2)
    l2 = 6.0 - math.sqrt(0.72)
    assert _pairre(2).score_hrt(h, r, t).item() == pytest.approx(l2, abs=1e-6)
    m = _pairre(1)
    assert m.relation_embedding.weight.shape == (1, 4)
    assert m.entity_embedding.weight.shape == (2, 2)
    # against every candidate: the same scores as triple by triple
    assert torch.allclose(
        m.score_t(h, r), m.score_hrt(h.expand(2), r.expand(2), torch.arange(2))
    )


def test_pairre_is_registered_with_its_own_hyperparameter():
    assert PairRE in models and "pairre" in models.names()
    assert models.hyperparameters("PairRE") == {"epsilon": 2.0, "p_norm": 1.0}
    m = resolve_model("pair-re", 10, 5, 8, gamma=9.0, p_norm=2)
    assert type(m) is PairRE and m.p_norm == 2.0
    assert str(m) == "PairRE(10, num_relations=5, hidden_channels=8, gamma=9.0)"
    with pytest.raises(ValueError, match=r"^`p_norm` must be 1 or 2 \(got 3\)$"):
        PairRE(10, 5, 8, p_norm=3)


def test_pairre_reaches_the_command_line_flower_and_the_docs(tmp_path, capsys):
    from fedgraph.cli.main import build_parser
    from fedgraph.cli.reference import kge_models_table
    from fedgraph.declared import declared_components
    from fedgraph.federated.kge.setup import KGESettings

    args = build_parser().parse_args(
        ["train", "d", "--algorithm", "fede", "--out", "o", "--model", "PairRE"]
    )
    assert args.model == "pairre"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--help"])
    assert "pairre: epsilon (2.0), p_norm (1.0)" in " ".join(
        capsys.readouterr().out.split()
    )
    assert [c for c in declared_components("model") if c["name"] == "pairre"] == [
        {"name": "pairre", "aliases": (), "class": "PairRE",
         "module": "fedgraph.models.kge.pairre",
         "kwargs": {"epsilon": 2.0, "p_norm": 1.0},
         # both from the bases' docstrings: KGEModel's and NormBasedModel's
         "help": {"epsilon": ":math:`\\epsilon` of the embedding range.",
                  "p_norm": "the norm :math:`p` of the distance, 1 or 2."}}
    ]  # fmt: skip
    s = KGESettings(model="pairre", model_kwargs={"p_norm": 2})
    assert s.model_kwargs == {"p_norm": 2.0}
    assert "| `pairre` | `PairRE` | `epsilon=2.0`, `p_norm=1.0` |" in kge_models_table()
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower import FlowerRunSettings

    cfg = {"data": "x", "algorithm": "fede", "model": "pairre",
           "model-kwargs": "p_norm=2"}  # fmt: skip
    parsed = FlowerRunSettings.from_run_config(cfg).settings
    assert (parsed.model, parsed.model_kwargs) == ("pairre", {"p_norm": 2.0})


def test_pairre_clients_train():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from fedlu_toy import toy_federation

    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.runtime import run_simulation

    s = KGESettings(model="pairre", dim=4, lr=0.01, batch_size=16, num_negatives=4,
                    local_epochs=1, model_kwargs={"p_norm": 2})  # fmt: skip
    strategy, clients = build_kge_federation("fede", toy_federation(), s)
    assert [type(c.model) for c in clients.values()] == [PairRE, PairRE]
    assert {c.model.p_norm for c in clients.values()} == {2.0}
    res = run_simulation(strategy, clients, num_rounds=2, eval_every=1, progress=False)
    assert res.rounds == 2
    assert all(math.isfinite(h["train"]["loss"]) for h in res.history)
