import copy
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from text_toy import tiny_bert, tiny_tokenizer, toy_graph  # noqa: E402

from fedgraph.data.entity_text import entity_titles  # noqa: E402
from fedgraph.eval import LinkPredState, rank_text_triples  # noqa: E402
from fedgraph.federated import FedMKGC, FedMKGCClient, Payload  # noqa: E402
from fedgraph.federated.base import Client  # noqa: E402
from fedgraph.federated.payload import PayloadError  # noqa: E402
from fedgraph.federated.separated import Separated  # noqa: E402
from fedgraph.models.text import ENCODER, BiEncoder, EntityTokens  # noqa: E402
from fedgraph.runtime.fedmkgc_runner import (  # noqa: E402
    MKGCSettings,
    build_fedmkgc,
    compact_relations,
    run_fedmkgc,
)
from fedgraph.runtime.simulation import run_simulation  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = MKGCSettings(lr=1e-3, batch_size=6, max_length=6, num_prefix_tokens=2)


def _client(lang="en", seed=0, **kw):
    graph = toy_graph(lang)
    tokens = EntityTokens.from_texts(
        tiny_tokenizer(), entity_titles(graph), max_length=6
    )
    torch.manual_seed(seed)
    model = BiEncoder(tiny_bert(), num_relations=3, num_prefix_tokens=2)
    kw = {"lr": 1e-3, "batch_size": 6, "seed": seed, **kw}
    return FedMKGCClient(graph, model, tokens, **kw)


class Spy(Client):
    r"""Records every payload a client receives and sends."""

    def __init__(self, inner):
        self.inner, self.received, self.sent = inner, [], []

    def fit(self, payload):
        self.received.append(payload)
        reply = self.inner.fit(payload)
        self.sent.append(reply)
        return reply

    def evaluate(self, payload):
        self.received.append(payload)
        reply = self.inner.evaluate(payload)
        self.sent.append(reply)
        return reply

    def register(self):
        return self.inner.register()

    def state_dict(self):
        return self.inner.state_dict()

    def load_state_dict(self, state):
        self.inner.load_state_dict(state)


def test_equal_weight_average_is_the_numpy_mean():
    shapes = {"encoder.a": (3, 2), "encoder.b": (4,)}
    init = {k: torch.zeros(s) for k, s in shapes.items()}
    strategy = FedMKGC(init)
    rng = np.random.default_rng(0)
    client_arrays = {
        c: {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
        for c in range(3)
    }
    replies = {
        c: Payload(
            arrays={k: torch.from_numpy(v) for k, v in a.items()},
            num_examples=[10, 1000, 1][c],  # ignored: every KG counts the same
        )
        for c, a in client_arrays.items()
    }
    strategy.aggregate_train(1, replies)
    for k in shapes:
        ref = np.mean([client_arrays[c][k] for c in range(3)], axis=0)
        np.testing.assert_allclose(strategy.arrays[k].numpy(), ref, rtol=1e-6)
    with pytest.raises(PayloadError, match="replied without 1 shared arrays"):
        strategy.aggregate_train(
            2, {0: Payload(arrays={"encoder.a": torch.zeros(3, 2)})}
        )


def test_sequential_schedule_trains_one_client_per_round_in_order():
    init = {"encoder.w": torch.zeros(2)}
    s = FedMKGC(init, schedule="sequential")
    s.register({2: Payload(), 0: Payload(), 1: Payload()})
    assert [list(s.configure_train(t, [0, 1, 2])) for t in range(1, 6)] == [
        [0], [1], [2], [0], [1],
    ]  # fmt: skip
    s = FedMKGC(init, schedule="sequential", order=[2, 0])
    s.register({0: Payload(), 1: Payload(), 2: Payload()})
    assert [list(s.configure_train(t, [0, 1, 2])) for t in (1, 2, 3)] == [[2], [0], [2]]
    with pytest.raises(ValueError, match="fraction=1.0"):
        s.configure_train(1, [0, 1])
    # one reply: the global model becomes that client's weights
    s.aggregate_train(1, {2: Payload(arrays={"encoder.w": torch.tensor([1.0, 2.0])})})
    assert s.arrays["encoder.w"].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="did not register"):
        FedMKGC(init, order=[5]).register({0: Payload()})
    with pytest.raises(ValueError, match="schedule"):
        FedMKGC(init, schedule="random")
    assert repr(FedMKGC(init, schedule="sequential", order=[1, 0])) == (
        "FedMKGC(schedule='sequential', order=[1, 0], local_epochs=1, num_arrays=1)"
    )


def test_a_trained_client_keeps_no_gradients():
    # one model-sized gradient per client would stay alive between rounds
    client = _client()
    client.fit(Payload(config={"local-epochs": 1}))
    assert all(p.grad is None for p in client.model.parameters())
    assert client.optimizer.state  # the Adam moments stay


def test_training_lowers_the_loss_and_raises_train_mrr():
    client = _client()
    before = client.evaluate(Payload(config={"split": "train"})).metrics
    losses = []
    for _ in range(30):
        reply = client.fit(Payload(config={"local-epochs": 1}))
        losses.append(reply.metrics["loss_sum"] / reply.metrics["count"])
    after = client.evaluate(Payload(config={"split": "train"})).metrics
    assert reply.arrays == {}  # nothing received: nothing shared (Independent)
    assert reply.num_examples == 18 and reply.metrics["count"] == 3
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])
    mrr = lambda m: m["mrr_sum"] / m["count"]  # noqa: E731
    assert mrr(after) > mrr(before) + 0.3
    assert mrr(after) > 0.8


def test_max_steps_cuts_a_round_to_the_first_batches_of_its_order():
    # 18 examples in batches of 6: 3 steps an epoch. Capped at 2, a round
    # ends with the weights the uncapped round had after its 2nd step, and
    # the batch order of the next round is the uncapped one (same draws).
    capped = _client(max_steps=2)
    full = _client()
    after_two = {}

    class Snapshot(torch.optim.Adam):
        def step(self, closure=None):
            out = super().step(closure)
            self.n = getattr(self, "n", 0) + 1
            if self.n == 2:
                after_two.update(copy.deepcopy(full.model.state_dict()))
            return out

    full._adam = lambda: Snapshot(full.model.parameters(), lr=full.lr)
    assert capped.fit(Payload(config={"local-epochs": 1})).metrics["count"] == 2
    assert full.fit(Payload(config={"local-epochs": 1})).metrics["count"] == 3
    got = capped.model.state_dict()
    assert got.keys() == after_two.keys()
    assert all(torch.equal(got[k], after_two[k]) for k in got)
    assert torch.equal(capped.generator.get_state(), full.generator.get_state())
    # counted over the round's epochs: 3 + 1 of 3 epochs; 0 is no cap
    four = _client(max_steps=4)
    assert four.fit(Payload(config={"local-epochs": 3})).metrics["count"] == 4
    none = _client(max_steps=0)
    assert none.fit(Payload(config={"local-epochs": 3})).metrics["count"] == 9
    with pytest.raises(ValueError, match="`max_steps` must be non-negative"):
        _client(max_steps=-1)


def test_relation_prefixes_never_leave_the_client():
    spies = {c: Spy(_client(lang, seed=c)) for c, lang in enumerate(["en", "it"])}
    init = spies[0].inner.model.shared_arrays()
    res = run_simulation(
        FedMKGC(init), spies, num_rounds=2, eval_every=1, patience=0, progress=False
    )
    assert res.best_round >= 1
    names = {ENCODER + k for k, _ in spies[0].inner.model.encoder.named_parameters()}
    for spy in spies.values():
        prefix = spy.inner.model.relation_prefix.detach()
        for p in spy.received + spy.sent:
            assert set(p.arrays) in (set(), names)
            assert not any("prefix" in k for k in p.arrays)
            assert all(v.shape != prefix.shape for v in p.arrays.values())
        fits = [p for p in spy.sent if p.arrays]
        assert len(fits) == 2 and all(set(p.arrays) == names for p in fits)


def test_communication_counts_equal_the_payload_sizes():
    clients = {c: _client(lang, seed=c) for c, lang in enumerate(["en", "it"])}
    init = clients[0].model.shared_arrays()
    num = clients[0].model.num_shared_parameters()
    bytes_lm = sum(v.numel() * v.element_size() for v in init.values())
    strategy = FedMKGC(init, schedule="sequential")
    res = run_simulation(
        strategy, clients, num_rounds=3, eval_every=3, patience=0, progress=False
    )
    # 3 training rounds of one client each; one validation and one test pass
    # over both clients, each evaluation payload carrying the global model
    assert [h["clients"] for h in res.history] == [[0], [1], [0]]
    assert res.comm["params_up"] == 3 * num
    assert res.comm["params_down"] == (3 + 2 + 2) * num
    # + the two (empty) registrations of round 0: 8 bytes each (num_examples)
    assert res.comm["messages_up"] == 2 + 3 + 4
    fit_reply_bytes = bytes_lm + 2 * 8 + 8  # count, loss_sum, num_examples
    eval_reply = clients[0].evaluate(Payload(config={"split": "valid"}))
    eval_reply_bytes = 8 * len(eval_reply.metrics) + 8
    assert eval_reply.num_bytes() == eval_reply_bytes
    assert res.comm["bytes_up"] == 2 * 8 + 3 * fit_reply_bytes + 4 * eval_reply_bytes
    train_down = bytes_lm + 8 + 8 + 8  # local-epochs, server-round, num_examples
    eval_down = {s: bytes_lm + len(s) + 8 for s in ("valid", "test")}
    assert res.comm["bytes_down"] == 3 * train_down + 2 * (
        eval_down["valid"] + eval_down["test"]
    )


def test_parallel_round_averages_the_clients_models():
    clients = {c: _client(lang, seed=c) for c, lang in enumerate(["en", "it"])}
    init = clients[0].model.shared_arrays()
    strategy = FedMKGC(init)
    payloads = strategy.configure_train(1, [0, 1])
    replies = {c: clients[c].fit(p.detach()) for c, p in payloads.items()}
    strategy.aggregate_train(1, replies)
    for k in init:
        mean = (replies[0].arrays[k] + replies[1].arrays[k]) / 2
        assert torch.allclose(strategy.arrays[k], mean, atol=1e-7)
    # both started from the same global weights and moved apart locally
    assert any(not torch.equal(strategy.arrays[k], init[k]) for k in init)
    assert any(
        not torch.equal(replies[0].arrays[k], replies[1].arrays[k]) for k in init
    )


def test_evaluation_merges_exactly_and_uses_the_global_model():
    clients = {c: _client(lang, seed=c) for c, lang in enumerate(["en", "it"])}
    strategy = FedMKGC(clients[1].model.shared_arrays())
    payloads = strategy.configure_evaluate(1, [0, 1], "test")
    replies = {c: clients[c].evaluate(p.detach()) for c, p in payloads.items()}
    # client 0 now holds client 1's language model (its own prefixes)
    for (_, a), (_, b) in zip(
        clients[0].model.encoder.named_parameters(),
        clients[1].model.encoder.named_parameters(),
        strict=True,
    ):
        assert torch.equal(a, b)
    merged = strategy.aggregate_evaluate(1, replies)
    states = [
        LinkPredState.from_dict({k: v for k, v in r.metrics.items() if "/" in k})
        for r in replies.values()
    ]
    rr = sum(s.sums[d]["rr"] for s in states for d in ("head", "tail"))
    assert merged["n_queries"] == 8  # 2 test triples x 2 directions x 2 clients
    assert merged["mrr"] == pytest.approx(rr / 8)
    # the flat sums give the same numbers through the base merge (Separated)
    flat = Separated().aggregate_evaluate(1, replies)
    for k in ("mrr", "mr", "hits@1", "hits@3", "hits@10"):
        assert flat[k] == pytest.approx(merged[k])
    with pytest.raises(ValueError, match="split"):
        clients[0].evaluate(Payload(config={"split": "unlearn"}))
    with pytest.raises(PayloadError, match="missing"):
        clients[0].evaluate(Payload(arrays={"encoder.x": torch.zeros(1)}))


def test_runner_builds_each_algorithm_and_resumes_exactly(tmp_path):
    graphs = {"en": toy_graph("en"), "it": toy_graph("it")}
    tok = tiny_tokenizer()
    bert = tiny_bert(seed=7, dropout=0.1)
    seq = [compact_relations(g) for g in graphs.values()]
    s, cl = build_fedmkgc("fedmkgc", seq, bert, tok, FAST)
    assert isinstance(s, FedMKGC) and s.schedule == "sequential" and len(cl) == 2
    s, _ = build_fedmkgc("FedMKGC_parallel", seq, bert, tok, FAST)
    assert s.schedule == "parallel"
    s, _ = build_fedmkgc("independent", seq, bert, tok, FAST)
    assert isinstance(s, Separated)
    with pytest.raises(ValueError, match="among choices"):
        build_fedmkgc("fedavg", seq, bert, tok, FAST)

    kw = {"num_rounds": 4, "eval_every": 2, "patience": 0}
    full = run_fedmkgc("fedmkgc", graphs, copy.deepcopy(bert), tok, FAST, **kw)
    ckpt = tmp_path / "ckpt"
    run_fedmkgc(
        "fedmkgc", graphs, copy.deepcopy(bert), tok, FAST, checkpoint_dir=ckpt,
        stop_after=3, **kw,
    )  # fmt: skip
    resumed = run_fedmkgc(
        "fedmkgc", graphs, copy.deepcopy(bert), tok, FAST, checkpoint_dir=ckpt,
        resume=True, **kw,
    )  # fmt: skip
    assert resumed.test == full.test
    assert [h["train"] for h in resumed.history] == [h["train"] for h in full.history]
    ind = run_fedmkgc("independent", graphs, copy.deepcopy(bert), tok, FAST, **kw)
    assert ind.comm["params_up"] == 0 and ind.comm["params_down"] == 0
    assert 0 < ind.test["mrr"] <= 1


def test_compact_relations_keeps_only_used_relations():
    g = toy_graph("en")
    t = g.all_triples()
    t = t[t[:, 1] != 1]
    from fedgraph.data.knowledge_graph import KnowledgeGraph

    sparse = KnowledgeGraph(
        {"train": t}, num_entities=8, num_relations=3,
        relation_names=["a", "b", "c"],
    )  # fmt: skip
    c = compact_relations(sparse)
    assert c.num_relations == 2 and c.relation_names == ["a", "c"]
    assert sorted(set(c.triples("train")[:, 1].tolist())) == [0, 1]
    assert torch.equal(c.triples("train")[:, [0, 2]], t[:, [0, 2]])


def test_a_capped_split_is_ranked_on_one_fixed_sample():
    client = _client(seed=3, max_eval_triples={"train": 4, "test": 50})
    train = client.graph.triples("train")
    rows = client.eval_rows["train"]
    # a sorted sample of 4 distinct rows, drawn from the client's seed
    assert rows.tolist() == sorted(set(rows.tolist())) and rows.numel() == 4
    assert torch.equal(rows, _client(seed=3, max_eval_triples={"train": 4})
                       .eval_rows["train"])  # fmt: skip
    assert "test" not in client.eval_rows  # a cap above the split's size: all
    reply = client.evaluate(Payload(config={"split": "train"})).metrics
    assert (reply["n_triples"], reply["n_split_triples"]) == (4, train.size(0))
    assert reply["count"] == 8  # head and tail of each sampled triple
    by_hand = rank_text_triples(
        client.model, client.tokens, train[rows], filter=client.filter,
        reranker=client.reranker, batch_size=client.eval_batch_size,
    )  # fmt: skip
    both = sum(by_hand.sums[d]["rr"] for d in ("head", "tail"))
    assert reply["mrr_sum"] == pytest.approx(both)
    # the same sample at the next evaluation; the test split is ranked whole
    assert client.evaluate(Payload(config={"split": "train"})).metrics == reply
    test = client.evaluate(Payload(config={"split": "test"})).metrics
    assert test["n_triples"] == test["n_split_triples"] == 2
    # the public parts evaluate is made of: the sample, and its ranks added
    # to a state given (its sums, the reply's)
    assert torch.equal(client.ranked_triples("train"), train[rows])
    assert torch.equal(client.ranked_triples("test"), client.graph.triples("test"))
    given = LinkPredState()
    assert client.rank("train", given) is given
    assert sum(given.sums[d]["rr"] for d in ("head", "tail")) == reply["mrr_sum"]
    with pytest.raises(ValueError, match="`split` must be one of"):
        client.ranked_triples("nope")


@pytest.mark.parametrize(
    ("caps", "message"),
    [({"unlearn": 3}, "must be splits of `graph`"),
     ({"valid": -1}, r"max_eval_triples\['valid'\]` must be non-negative")],
)  # fmt: skip
def test_a_bad_evaluation_cap_is_refused(caps, message):
    with pytest.raises(ValueError, match=message):
        _client(max_eval_triples=caps)


def test_entity_texts_are_encoded_again_only_when_the_model_changed(monkeypatch):
    import fedgraph.federated.text.client as client_module

    calls = []
    real = client_module.encode_all_entities

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(client_module, "encode_all_entities", counting)
    client = _client()
    other = _client(seed=5)
    valid = client.evaluate(Payload(config={"split": "valid"})).metrics
    test = client.evaluate(Payload(config={"split": "test"})).metrics
    assert len(calls) == 1  # the test reused the validation's embeddings
    # the cached embeddings rank exactly as freshly encoded ones
    fresh = _client()
    monkeypatch.setattr(client_module, "encode_all_entities", real)
    assert fresh.evaluate(Payload(config={"split": "test"})).metrics == test
    monkeypatch.setattr(client_module, "encode_all_entities", counting)
    # the same weights received again: still cached
    same = Payload(arrays=client.model.shared_arrays(), config={"split": "valid"})
    assert client.evaluate(same).metrics == valid and len(calls) == 1
    # other weights received, training, a loaded state: encoded again
    moved = {k: v + 0.01 for k, v in client.model.shared_arrays().items()}
    client.evaluate(Payload(arrays=moved, config={"split": "valid"}))
    assert len(calls) == 2
    client.fit(Payload(config={"local-epochs": 1}))
    client.evaluate(Payload(config={"split": "valid"}))
    assert len(calls) == 3
    client.load_state_dict(other.state_dict())
    client.evaluate(Payload(config={"split": "valid"}))
    assert len(calls) == 4
