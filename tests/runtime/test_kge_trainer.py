import shlex

import pytest
import torch

from fedgraph.cli.baselines import main as baselines_main
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.results import read_results
from fedgraph.models import SigmoidNSLoss, TransE
from fedgraph.models.samplers import UniformNegativeSampler
from fedgraph.runtime.baselines import run_baseline
from fedgraph.training.kge_trainer import KGETrainer, train_epochs

pytestmark = pytest.mark.usefixtures("one_thread")


def random_graph(n_ent=20, n_rel=3, n=200, seed=0):
    g = torch.Generator().manual_seed(seed)

    def rt(k):
        return torch.stack(
            [
                torch.randint(0, n_ent, (k,), generator=g),
                torch.randint(0, n_rel, (k,), generator=g),
                torch.randint(0, n_ent, (k,), generator=g),
            ],
            1,
        )

    return KnowledgeGraph(
        {"train": rt(n), "valid": rt(20), "test": rt(20)}, n_ent, n_rel
    )


def test_train_epochs_lowers_loss_and_calls_extra_loss():
    kg = random_graph()
    torch.manual_seed(0)
    m = TransE(20, 3, 8, gamma=2.0)
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    calls = []

    def extra(model, batch, neg, mode):
        calls.append(mode)
        return 0.0 * model.entity_embedding.weight.sum()

    kw = dict(
        batch_size=50,
        loss=SigmoidNSLoss(),
        optimizer=opt,
        sampler=UniformNegativeSampler(20, 8, shared=True),
        generator=torch.Generator().manual_seed(0),
    )
    first = train_epochs(m, kg.triples("train"), epochs=1, extra_loss=extra, **kw)
    last = train_epochs(m, kg.triples("train"), epochs=20, **kw)
    assert last < first
    assert calls == ["head-batch", "tail-batch"] * 4


class RecordingSampler(UniformNegativeSampler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches = []

    def sample(self, positive, mode="tail-batch", generator=None):
        self.batches.append(positive.clone())
        return super().sample(positive, mode, generator)


@pytest.mark.parametrize("shuffle", [True, False])
def test_train_epochs_batch_order(shuffle):
    triples = random_graph().triples("train")
    sampler = RecordingSampler(20, 4, shared=True)
    torch.manual_seed(0)
    m = TransE(20, 3, 8, gamma=2.0)
    train_epochs(
        m,
        triples,
        epochs=2,
        batch_size=64,
        loss=SigmoidNSLoss(),
        optimizer=torch.optim.Adam(m.parameters(), lr=0.01),
        sampler=sampler,
        generator=torch.Generator().manual_seed(0),
        modes=("tail-batch",),
        shuffle=shuffle,
    )
    epochs = [torch.cat(sampler.batches[:4]), torch.cat(sampler.batches[4:])]
    for seen in epochs:  # every epoch sees every triple once
        assert torch.equal(
            torch.sort(seen[:, 0] * 10**6 + seen[:, 1] * 10**3 + seen[:, 2])[0],
            torch.sort(triples[:, 0] * 10**6 + triples[:, 1] * 10**3 + triples[:, 2])[
                0
            ],
        )
    if shuffle:
        assert not torch.equal(epochs[0], epochs[1])
        assert not torch.equal(epochs[0], triples)
    else:  # in the given order, every epoch
        assert torch.equal(epochs[0], triples) and torch.equal(epochs[1], triples)


def test_resume_gives_identical_numbers(tmp_path):
    kg = random_graph()

    def trainer(max_epochs, ckpt):
        torch.manual_seed(0)
        return KGETrainer(
            TransE(20, 3, 8),
            kg,
            lr=0.01,
            batch_size=64,
            num_negatives=8,
            eval_every=2,
            patience=50,
            max_epochs=max_epochs,
            checkpoint=ckpt,
        )

    full = trainer(8, tmp_path / "a.pt")
    full.fit()
    part = trainer(4, tmp_path / "b.pt")
    part.fit()  # "killed" after 4 epochs
    resumed = trainer(8, tmp_path / "b.pt")
    resumed.fit()
    assert resumed.epoch == full.epoch == 8
    assert [h["valid"] for h in resumed.history] == [h["valid"] for h in full.history]
    assert torch.equal(
        resumed.model.entity_embedding.weight, full.model.entity_embedding.weight
    )


def test_early_stopping_keeps_best():
    kg = random_graph()
    torch.manual_seed(0)
    tr = KGETrainer(
        TransE(20, 3, 8),
        kg,
        lr=0.5,
        batch_size=64,
        num_negatives=4,
        eval_every=1,
        patience=2,
        max_epochs=40,
    )
    info = tr.fit()
    mrrs = [h["valid"]["mrr"] for h in info["history"]]
    assert info["best_epoch"] == 1 + mrrs.index(max(mrrs))
    assert tr.evaluate("valid").compute()["mrr"] == max(mrrs)
    assert tr.bad == 2 or tr.epoch == 40


def _write_folder(root, clients=2):
    """Writes ``clients`` shards of random triples (each split without repeated
    lines, in first-seen order) and returns each client's number of test triples."""
    n_test = []
    for k in range(clients):
        kg = random_graph(seed=k)
        d = root / f"client{k}"
        d.mkdir(parents=True)
        for s in ("train", "valid", "test"):
            lines = dict.fromkeys(
                f"e{h + 5 * k}\tr{r}\te{t + 5 * k}"
                for h, r, t in kg.triples(s).tolist()
            )
            (d / f"{s}.txt").write_text("\n".join(lines) + "\n")
        n_test.append(len(lines))
    return n_test


def test_independent_and_centralized_baselines(tmp_path):
    n_test = _write_folder(tmp_path / "data")
    kw = dict(
        hidden_channels=8,
        gamma=2.0,
        lr=0.01,
        batch_size=64,
        num_negatives=8,
        eval_every=2,
        patience=2,
        max_epochs=4,
    )
    ind = run_baseline(
        tmp_path / "data", setting="independent", out=tmp_path / "i", **kw
    )
    doc = read_results(ind["path"])
    assert [c["n_test"] for c in doc["clients"]] == n_test
    # weighted by test triples (each ranked as a head and a tail query)
    assert doc["weighted"]["mrr"] == pytest.approx(
        sum(c["mrr"] * n for c, n in zip(doc["clients"], n_test, strict=True))
        / sum(n_test)
    )
    assert doc["settings"]["candidates"] == "client-local entities"
    assert (tmp_path / "i" / "trainer1.pt").exists()
    cen = run_baseline(
        tmp_path / "data", setting="centralized", out=tmp_path / "c", **kw
    )
    doc = read_results(cen["path"])
    assert len(doc["clients"]) == 2
    assert doc["weighted"]["n_queries"] == 2 * sum(n_test)


@pytest.mark.parametrize("protocol", ["fede", "fedlu"])
def test_centralized_validation_follows_the_protocol(tmp_path, protocol):
    # FedE's Entire validates each client's triples among that client's
    # training entities and pools the ranks; FedLU's Centralized validates the
    # union's triples among all its entities. Checked against each client's
    # local graph scored by its rows of the best centralized model.
    from fedgraph.data import load_federated_folder
    from fedgraph.data.checkpoint import load_checkpoint
    from fedgraph.eval.metrics import LinkPredState
    from fedgraph.eval.protocol import protocols
    from fedgraph.eval.ranking import TripleFilter, rank_triples

    _write_folder(tmp_path / "data")
    res = run_baseline(
        tmp_path / "data", setting="centralized", out=tmp_path / "c",
        protocol=protocol, hidden_channels=8, gamma=2.0, lr=0.05,
        batch_size=64, num_negatives=8, eval_every=1, patience=3, max_epochs=4,
    )  # fmt: skip
    doc = read_results(res["path"])
    p = protocols[protocol]
    assert doc["settings"]["protocol"]["centralized_validation"] == (
        "per-client" if protocol == "fede" else "pooled"
    )
    best = load_checkpoint(tmp_path / "c" / "trainer0.pt")
    recorded = next(
        h["valid"] for h in doc["history"][0] if h["epoch"] == best["best_epoch"]
    )
    fkg = load_federated_folder(tmp_path / "data")
    states = []
    for shard in fkg:
        g = shard.graph
        local = TransE(g.num_entities, g.num_relations, 8, gamma=2.0)
        local.entity_embedding.weight.data = best["best_state"][
            "entity_embedding.weight"
        ][shard.entity_ids]
        local.relation_embedding.weight.data = best["best_state"][
            "relation_embedding.weight"
        ][shard.relation_ids]
        states.append(
            rank_triples(
                local,
                g.triples("valid"),
                filter=TripleFilter(g.all_triples(), g.num_entities, g.num_relations),
                directions=p.directions,
                exclude=p.excluded_ids(g),
            )
        )
    per_client = LinkPredState.merged(states).compute()
    n_valid = sum(s.graph.num_triples("valid") for s in fkg)
    if protocol == "fede":
        assert recorded["n_queries"] == n_valid  # tails only
        assert recorded["mrr"] == pytest.approx(per_client["mrr"], abs=1e-12)
    else:  # heads and tails of the union's (distinct) triples
        union = torch.cat([s.global_triples("valid") for s in fkg])
        assert recorded["n_queries"] == 2 * len(torch.unique(union, dim=0))
        assert recorded["mrr"] != pytest.approx(per_client["mrr"], abs=1e-6)


def test_baselines_cli_records_a_rerunnable_command(tmp_path):
    # a data path with a space: the recorded command must quote it, so that
    # pasting it into a shell reruns the same baseline
    data = tmp_path / "my data"
    _write_folder(data)
    argv = [
        "--data", str(data), "--dim", "8", "--gamma", "2", "--lr", "0.01",
        "--batch-size", "64", "--num-negatives", "8", "--eval-every", "2",
        "--max-epochs", "2", "--out", str(tmp_path / "o"),
        "--results", str(tmp_path / "r.json"),
    ]  # fmt: skip
    assert baselines_main(argv) == 0
    command = read_results(tmp_path / "r.json")["settings"]["command"]
    words = shlex.split(command)
    assert words[:3] == ["python", "-m", "fedgraph.cli.baselines"]
    assert words[3:] == argv


class _NaNAfter(SigmoidNSLoss):
    # finite for the first `calls` steps, NaN after
    def __init__(self, calls):
        super().__init__()
        self.left = calls

    def __call__(self, pos, neg, weight=None):
        value = super().__call__(pos, neg, weight)
        self.left -= 1
        return value if self.left >= 0 else value * float("nan")


def test_a_nan_loss_stops_the_trainer_before_its_checkpoint(tmp_path):
    # 200 triples in batches of 50, two modes: 8 steps an epoch. The loss turns
    # NaN in epoch 3; the validation after epoch 2 is the last one kept.
    from fedgraph.errors import DivergedError

    kg = random_graph()
    torch.manual_seed(0)
    ckpt = tmp_path / "t.pt"
    tr = KGETrainer(
        TransE(20, 3, 8, gamma=2.0), kg, loss=_NaNAfter(8 * 2 + 3), lr=0.01,
        batch_size=50, num_negatives=4, eval_every=2, patience=5, max_epochs=10,
        checkpoint=ckpt, log="client1",
    )  # fmt: skip
    with pytest.raises(DivergedError) as err:
        tr.fit()
    message = str(err.value)
    assert "epochs 3-4 (client1)" in message and "mean loss is nan" in message
    assert f"{ckpt} still holds epoch 2" in message and "\n" not in message
    state = torch.load(ckpt, weights_only=False)
    assert state["epoch"] == 2 and len(state["history"]) == 1
    assert torch.isfinite(state["model"]["entity_embedding.weight"]).all()
