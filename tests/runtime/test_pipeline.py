r"""``fedgraph.pipeline``: the numbers of ``fedgraph train`` for the same
settings (KGE federated and baselines, R-GCN, text), a saved result that
answers the same queries, and ``predict`` against a hand computation."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest
import torch

import fedgraph
from fedgraph.cli.main import main
from fedgraph.federated.kge.setup import KGESettings
from fedgraph.runtime.pipeline_result import PipelineResult
from fedgraph.runtime.pipeline_settings import (
    loop_settings,
    run_seed,
    training_settings,
)
from fedgraph.runtime.predict import Prediction, TrainedKGE, kge_spec

pytestmark = pytest.mark.usefixtures("one_thread")

#: small KGE settings, as options of ``fedgraph train`` and as ``pipeline`` arguments
FAST = ["--rounds", "3", "--local-epochs", "1", "--dim", "8", "--batch-size", "32",
        "--num-negatives", "4", "--eval-every", "1", "--lr", "0.01", "--quiet"]  # fmt: skip
TRAINING = {
    "dim": 8,
    "batch_size": 32,
    "num_negatives": 4,
    "local_epochs": 1,
    "lr": 0.01,
}
LOOP = {"num_rounds": 3, "eval_every": 1}


def write_federation(root: Path, n_clients: int = 2, seed: int = 0) -> Path:
    r"""Client folders of random triples over overlapping named entities."""
    rng = random.Random(seed)
    for c in range(n_clients):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")
    return root


def curves(history: list[dict]) -> list[dict]:
    r"""A run's history less its timings (``train_seconds``, ...), as JSON
    holds it (client ids as strings)."""
    kept = [{k: v for k, v in h.items() if "seconds" not in k} for h in history]
    return json.loads(json.dumps(kept))


@pytest.fixture(scope="module")
def federation(tmp_path_factory) -> Path:
    return write_federation(tmp_path_factory.mktemp("pipeline") / "fed")


@pytest.fixture(scope="module")
def fede(federation) -> PipelineResult:
    return fedgraph.pipeline(
        federation, model="transe", algorithm="fede", training=TRAINING, loop=LOOP
    )


@pytest.mark.parametrize("algorithm", ["fede", "fedprox", "independent", "centralized"])
def test_kge_pipeline_gives_the_numbers_of_fedgraph_train(
    federation, tmp_path, algorithm
):
    out = tmp_path / "run"
    argv = ["train", str(federation), "--algorithm", algorithm, "--out", str(out)]
    assert main(argv + FAST) == 0
    doc = json.loads((out / "results.json").read_text())
    res = fedgraph.pipeline(
        federation, model="transe", algorithm=algorithm, training=TRAINING, loop=LOOP
    )
    assert res.metrics == doc["weighted"]
    assert res.metrics["mrr"] > 0
    rows = {r["client"]: r["mrr"] for r in doc["clients"]}
    assert {c: m["mrr"] for c, m in res.client_metrics.items()} == rows
    assert res.rounds == doc["rounds"]
    if algorithm in ("fede", "fedprox"):
        assert curves(res.history) == curves(doc["history"])
        assert res.best_round == doc["best_round"]
        assert res.comm == doc["comm"] and res.comm["params_up"] > 0
        assert sorted(res.trained) == [0, 1]
        # saved, it is the results file of `fedgraph train`, less timings
        saved = json.loads((res.save(tmp_path / "saved") / "results.json").read_text())
        assert sorted(saved) == sorted(doc)
        for key in ("weighted", "clients", "best_round", "best_valid", "comm"):
            assert saved[key] == doc[key]
        assert saved["settings"]["algorithm"] == algorithm
    else:
        assert sorted(res.trained) == ([0] if algorithm == "centralized" else [0, 1])


@pytest.mark.parametrize("algorithm", ["fede", "independent"])
def test_model_kwargs_reach_the_models_as_in_fedgraph_train(
    federation, tmp_path, algorithm
):
    out = tmp_path / "run"
    argv = ["train", str(federation), "--algorithm", algorithm, "--out", str(out),
            "--model-kwargs", "p_norm=2", *FAST]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    res = fedgraph.pipeline(
        federation,
        algorithm=algorithm,
        model_kwargs={"p_norm": 2},
        training=TRAINING,
        loop=LOOP,
    )
    assert res.metrics == doc["weighted"]
    assert [m.p_norm for m in res.models.values()] == [2.0, 2.0]
    back = PipelineResult.load(res.save(tmp_path / "saved"))
    assert [m.p_norm for m in back.models.values()] == [2.0, 2.0]
    with pytest.raises(ValueError, match="p_nrom"):
        fedgraph.pipeline(federation, model_kwargs={"p_nrom": 2}, loop=LOOP)


def test_batched_local_training_is_the_one_of_fedgraph_train(
    federation, tmp_path, monkeypatch
):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    out = tmp_path / "run"
    argv = ["train", str(federation), "--algorithm", "fede", "--out", str(out),
            "--local-training", "batched", *FAST]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    res = fedgraph.pipeline(
        federation, local_training="batched", training=TRAINING, loop=LOOP
    )
    assert res.metrics == doc["weighted"]
    assert res.settings["local_training"] == "batched"
    with pytest.raises(ValueError, match="^`local_training` 'batched' applies to "):
        fedgraph.pipeline(
            federation, algorithm="independent", local_training="batched", loop=LOOP
        )


def test_a_saved_result_answers_the_same_queries(fede, tmp_path):
    path = fede.save(tmp_path / "saved")
    assert sorted(p.name for p in path.iterdir()) == [
        ".fedgraph",
        ".fedgraph.lock",
        "models.pt",
        "results.json",
    ]
    back = PipelineResult.load(path)
    assert back.metrics == fede.metrics
    assert back.history == json.loads(json.dumps(fede.history))  # as JSON holds it
    assert back.client_metrics == {
        c: {
            **{k: v for k, v in m.items() if k != "n_triples"},
            "n_test": m["n_triples"],
        }
        for c, m in fede.client_metrics.items()
    }
    assert (back.family, back.algorithm, back.best_round) == ("kge", "fede", 2)
    assert fede.best_round == 2
    for c, trained in fede.trained.items():
        for head in trained.entity_names[:4]:
            for filtered in (True, False):
                query = {"relation": trained.relation_names[0], "k": 5, "client": c}
                asked = fede.predict(head=head, filtered=filtered, **query)
                assert back.predict(head=head, filtered=filtered, **query) == asked
                assert back.predict(tail=head, **query) == fede.predict(
                    tail=head, **query
                )
    # a second save replaces its own files; a foreign file is never replaced
    fede.save(path)
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "results.json").write_text("{}")
    with pytest.raises(ValueError, match=r"foreign/results.json` was not written by"):
        fede.save(tmp_path / "foreign")
    assert (tmp_path / "foreign" / "results.json").read_text() == "{}"


def tiny_transe() -> TrainedKGE:
    r"""TransE over 6 entities and 2 relations with random weights; known:
    (a, r0, b), (a, r0, c) and (d, r0, a)."""
    from fedgraph.models.kge import TransE

    torch.manual_seed(3)
    model = TransE(6, 2, hidden_channels=4, gamma=2.0)
    known = torch.tensor([[0, 0, 1], [0, 0, 2], [3, 0, 0]])
    return TrainedKGE(model, kge_spec(model), list("abcdef"), ["r0", "r1"], known)


def test_predict_ranks_tails_and_heads_by_the_hand_computed_transe_score():
    t = tiny_transe()
    ent, rel = t.model.entity_embedding.weight, t.model.relation_embedding.weight
    with torch.no_grad():
        tails = [2.0 - (ent[0] + rel[0] - ent[j]).abs().sum() for j in range(6)]
        heads = [2.0 - (ent[j] + rel[0] - ent[0]).abs().sum() for j in range(6)]
    for scores, query in ((tails, {"head": "a"}), (heads, {"tail": "a"})):
        order = sorted(range(6), key=lambda j: (-float(scores[j]), j))
        got = t.top_k(relation="r0", k=6, filtered=False, **query)
        assert [p.id for p in got] == order
        assert [p.name for p in got] == ["abcdef"[j] for j in order]
        assert [p.score for p in got] == pytest.approx(
            [float(scores[j]) for j in order]
        )
    assert len(t.top_k(head="a", relation="r0", k=2, filtered=False)) == 2


def test_a_reciprocal_model_predicts_heads_through_the_inverse_relation():
    from fedgraph.models.kge import TransE

    torch.manual_seed(4)
    model = TransE(6, 4, hidden_channels=4, gamma=2.0)  # r0, r1 and their inverses
    known = torch.tensor([[0, 0, 1]])
    t = TrainedKGE(
        model, kge_spec(model, reciprocal=True), list("abcdef"), ["r0", "r1"], known
    )
    ent, rel = model.entity_embedding.weight, model.relation_embedding.weight
    with torch.no_grad():  # (?, r1, c) is (c, r1 + 2, ?)
        heads = [2.0 - (ent[2] + rel[3] - ent[j]).abs().sum() for j in range(6)]
    order = sorted(range(6), key=lambda j: (-float(heads[j]), j))
    got = t.top_k(tail="c", relation="r1", k=6, filtered=False)
    assert [p.id for p in got] == order
    assert [p.score for p in got] == pytest.approx([float(heads[j]) for j in order])
    back = TrainedKGE.from_state(t.to_state())
    assert back.top_k(tail="c", relation="r1", k=6, filtered=False) == got


@pytest.mark.parametrize("algorithm", ["fede", "centralized"])
def test_reciprocal_relations_as_in_fedgraph_train(federation, tmp_path, algorithm):
    out = tmp_path / "run"
    argv = ["train", str(federation), "--algorithm", algorithm, "--out", str(out),
            "--reciprocal", *FAST]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    res = fedgraph.pipeline(
        federation,
        algorithm=algorithm,
        training={**TRAINING, "regime_kwargs": {"reciprocal": True}},
        loop=LOOP,
    )
    assert res.metrics == doc["weighted"]
    trained = res.trained[0]
    assert trained.spec["reciprocal"] is True
    assert trained.model.num_relations == 2 * len(trained.relation_names)
    tail, rel = trained.entity_names[1], trained.relation_names[0]
    assert len(res.predict(tail=tail, relation=rel, client=0, k=4)) == 4


def test_filtered_answers_are_the_unfiltered_ones_less_the_known_triples():
    t = tiny_transe()
    every = t.top_k(head="a", relation="r0", k=6, filtered=False)
    assert t.top_k(head="a", relation="r0", k=6) == [
        p for p in every if p.name not in ("b", "c")
    ]
    heads = t.top_k(tail="a", relation="r0", k=6, filtered=False)
    assert t.top_k(tail="a", relation="r0", k=6) == [p for p in heads if p.name != "d"]
    # another relation has no known answer: nothing filtered
    other = t.top_k(head="a", relation="r1", k=6, filtered=False)
    assert t.top_k(head="a", relation="r1", k=6) == other


@pytest.mark.parametrize(
    "query, message",
    [
        ({"head": "ab", "relation": "r0"}, "`head` 'ab' is not a name of this model "
         "(6 known); did you mean 'b', 'a'?"),
        ({"head": "a", "relation": "r9"}, "`relation` 'r9' is not a name of this "
         "model (2 known); did you mean 'r1', 'r0'?"),
        ({"relation": "r0"}, "give exactly one of `head`"),
        ({"head": "a", "tail": "b", "relation": "r0"}, "give exactly one of `head`"),
        ({"head": "a", "relation": "r0", "k": 0}, "`k` must be a positive integer "
         "(got 0)"),
    ],
)  # fmt: skip
def test_bad_queries_name_the_argument(query, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        tiny_transe().top_k(**query)


def test_a_federated_result_asks_for_the_client(fede):
    name, rel = fede.trained[1].entity_names[0], fede.trained[1].relation_names[0]
    with pytest.raises(
        ValueError,
        match=r"^`client` is needed: this fede run has one "
        r"model per client \[0, 1\]$",
    ):
        fede.predict(head=name, relation=rel)
    with pytest.raises(
        ValueError, match=r"^`client` must be one of \[0, 1\] \(got 7\)$"
    ):
        fede.predict(head=name, relation=rel, client=7)
    answers = fede.predict(head=name, relation=rel, client=1, k=3)
    assert len(answers) == 3 and all(isinstance(a, Prediction) for a in answers)
    assert answers == sorted(answers, key=lambda a: -a.score)


def test_pipeline_refuses_unknown_settings_fields(federation):
    with pytest.raises(
        ValueError, match=r"^`training` has no field 'epochs' \(KGESettings"
    ):
        fedgraph.pipeline(federation, training={"epochs": 3}, loop=LOOP)
    with pytest.raises(
        ValueError, match=r"^`loop` has no field 'rounds' \(LoopSettings"
    ):
        fedgraph.pipeline(federation, training=TRAINING, loop={"rounds": 3})
    with pytest.raises(ValueError, match=r"^Could not resolve 'fedx'"):
        fedgraph.pipeline(federation, algorithm="fedx", training=TRAINING, loop=LOOP)
    with pytest.raises(
        ValueError,
        match=r"^`algorithm_kwargs`: fede has no setting 'proximal_mu' \(a setting "
        r"of fedprox\)",
    ):
        fedgraph.pipeline(federation, algorithm_kwargs={"proximal_mu": 1.0})
    with pytest.raises(
        ValueError, match=r"^`algorithm_kwargs`: centralized has no setting 'mu'$"
    ):
        fedgraph.pipeline(
            federation, algorithm="centralized", algorithm_kwargs={"mu": 1}
        )
    with pytest.raises(ValueError, match=r"^`seed` must be a non-negative integer"):
        fedgraph.pipeline(federation, seed=-1)
    with pytest.raises(
        ValueError,
        match=r"^`model` 'transe' and the `training` settings' model 'rotate' differ",
    ):
        fedgraph.pipeline(federation, training=KGESettings(model="rotate"))


def test_the_seed_is_the_training_settings_one_unless_given():
    assert run_seed(None, None) == 0
    assert run_seed(None, {"seed": 4}) == 4
    assert run_seed(None, KGESettings(seed=5)) == 5
    assert run_seed(2, KGESettings(seed=5)) == 2
    loop = loop_settings({"num_rounds": 2}, "kge", 5)
    assert (loop.seed, loop.num_rounds) == (5, 2)
    settings = training_settings(KGESettings, KGESettings(seed=1), 5, model="transe")
    assert settings.seed == 5


def test_pipeline_partitions_a_single_kg_by_name(data_root):
    res = fedgraph.pipeline(
        "nations",
        partition="relation",
        partition_kwargs={"num_clients": 2},
        training=TRAINING,
        loop={"num_rounds": 1},
        root=data_root,
    )
    assert sorted(res.trained) == [0, 1]
    assert res.settings["num_clients"] == 2 and res.rounds == 1
    names = set(res.trained[0].entity_names)
    assert {"usa", "uk", "china"} <= names and len(names) == 14


# ---------------------------------------------------------------- R-GCN
@pytest.fixture(scope="module")
def rdf_partition(tmp_path_factory) -> Path:
    from fedgraph.partition.rdf_type import RDFTypePartitioner

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from test_fedalign import toy_graph

    path = tmp_path_factory.mktemp("rgcn-pipeline") / "toy-rdf-3"
    RDFTypePartitioner(3, num_types=2, seed=0)(toy_graph()).save(path)
    return path


def test_rgcn_pipeline_gives_the_numbers_of_fedgraph_train(rdf_partition, tmp_path):
    out = tmp_path / "run"
    argv = ["train", str(rdf_partition), "--model", "rgcn", "--algorithm", "fedalign",
            "--out", str(out), "--rounds", "2", "--local-epochs", "1",
            "--num-bases", "4", "--dim", "4", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    res = fedgraph.pipeline(
        partition=rdf_partition,
        model="rgcn",
        algorithm="fedalign",
        training={"hidden_channels": 4, "num_bases": 4, "local_epochs": 1},
        loop={"num_rounds": 2},
    )
    assert res.family == "rgcn" and res.metrics == doc["weighted"]
    assert curves(res.history) == curves(doc["history"])
    node = res.trained[0].node_names[0]
    scores = res.predict(entity=node, client=0)
    assert [p.name for p in scores] in (["a", "b"], ["b", "a"])
    assert sum(p.score for p in scores) == pytest.approx(1.0)
    back = PipelineResult.load(res.save(tmp_path / "saved"))
    assert back.predict(entity=node, client=0) == scores
    with pytest.raises(ValueError, match="an R-GCN run predicts the classes of an"):
        res.predict(head=node, relation="r0", client=0)


# ----------------------------------------------------------------- text
def test_text_pipeline_gives_the_numbers_of_fedgraph_train(tmp_path):
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    from text_toy import save_tiny_model, write_toy_dbp5l

    data, model = write_toy_dbp5l(tmp_path / "dbp"), save_tiny_model(tmp_path / "bert")
    out = tmp_path / "run"
    argv = ["train", str(data), "--model", "text", "--encoder", str(model),
            "--algorithm", "fedmkgcparallel", "--out", str(out), "--rounds", "2",
            "--eval-every", "1", "--lr", "1e-3", "--batch-size", "6",
            "--max-length", "6", "--prefix-tokens", "2", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    res = fedgraph.pipeline(
        data,
        model="text",
        model_kwargs={"encoder": str(model)},
        algorithm="fedmkgcparallel",
        training={"lr": 1e-3, "batch_size": 6, "max_length": 6, "num_prefix_tokens": 2},
        loop={"num_rounds": 2, "eval_every": 1},
    )
    assert res.family == "text" and res.metrics == doc["weighted"]
    assert curves(res.history) == curves(doc["history"])
    with pytest.raises(ValueError, match="^a text run keeps no model that answers"):
        res.predict(head="paris", relation="r0")
