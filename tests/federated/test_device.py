r"""Clients on a GPU (``KGESettings.device`` / ``fedgraph train --device``).

Batches and negatives are drawn on the CPU from each client's generator, so a
run on a GPU sees exactly the CPU run's samples: the two runs agree up to float
rounding, and a run checkpointed on one device resumes on the other. The
GPU tests are skipped where no CUDA device is present (CI); the device tool
runs them on a lent GPU. The CPU tests check what makes that possible.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.runtime import run_simulation

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

ALGORITHMS = ["fede", "fedprox", "fedec", "fedlu", "fedep", "feds"]


def _settings(device: str, algorithm: str, shared: bool = True) -> KGESettings:
    extra = {"p": 0.5, "sync_interval": 2} if algorithm == "feds" else {}
    return KGESettings(
        dim=8,
        gamma=4.0,
        lr=1e-2,
        batch_size=16,
        num_negatives=4,
        local_epochs=2,
        shared_negatives=shared,
        device=device,
        extra=extra,
    )


def _run(algorithm: str, device: str, rounds: int = 3, shared: bool = True, **kw):
    torch.manual_seed(0)
    strategy, clients = build_kge_federation(
        algorithm, toy_federation(), _settings(device, algorithm, shared)
    )
    res = run_simulation(
        strategy,
        clients,
        num_rounds=rounds,
        eval_every=1,
        patience=0,
        progress=False,
        **kw,
    )
    return res, clients


def _curve(res, key: str = "mrr") -> list[float]:
    return [h["valid"][key] for h in res.history if "valid" in h]


def test_state_dict_holds_cpu_copies_not_views():
    _, clients = _run("fedlu", "cpu", rounds=1)
    cl = clients[0]
    state = cl.state_dict()
    before = state["model"]["entity_embedding.weight"].clone()
    with torch.no_grad():
        cl.table.add_(1.0)
        cl.global_table.add_(1.0)
    assert torch.equal(state["model"]["entity_embedding.weight"], before)
    assert not torch.equal(state["global_entity"], cl.global_table.detach())
    tensors = [state["global_entity"], *state["model"].values()]
    for s in state["optimizer"]["state"].values():
        tensors += [v for v in s.values() if torch.is_tensor(v)]
    assert all(t.device.type == "cpu" for t in tensors)


def test_filter_to_same_device_is_itself_and_ranks_equal():
    fed = toy_federation()
    g = fed[0].graph
    f = TripleFilter(g.all_triples(["train", "valid", "test"]), fed[0].num_entities, 2)
    assert f.to("cpu") is f and f.device.type == "cpu"
    _, clients = _run("fede", "cpu", rounds=1)
    model = clients[0].model
    a = rank_triples(model, g.triples("valid"), filter=f).compute()
    b = rank_triples(model, g.triples("valid"), filter=f.to("cpu")).compute()
    assert a == b


@cuda
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_gpu_run_matches_cpu_run(algorithm):
    for shared in (True, False):
        cpu, cpu_clients = _run(algorithm, "cpu", shared=shared)
        gpu, gpu_clients = _run(algorithm, "cuda", shared=shared)
        assert len(_curve(cpu)) == len(_curve(gpu)) == 3
        assert _curve(gpu) == pytest.approx(_curve(cpu), abs=2e-3)
        assert gpu.test["mrr"] == pytest.approx(cpu.test["mrr"], abs=2e-3)
        assert gpu.comm == cpu.comm  # same payload sizes, all on the CPU
        for c in cpu_clients:
            t_cpu = cpu_clients[c].table.detach()
            t_gpu = gpu_clients[c].table.detach()
            assert t_gpu.device.type == "cuda"
            torch.testing.assert_close(t_gpu.cpu(), t_cpu, atol=1e-4, rtol=1e-4)


@cuda
@pytest.mark.parametrize("algorithm", ["fedprox", "fedlu", "feds"])
def test_run_checkpointed_on_gpu_resumes_on_cpu(tmp_path, algorithm):
    full, _ = _run(algorithm, "cpu", rounds=4)
    _run(algorithm, "cuda", rounds=4, checkpoint_dir=tmp_path, stop_after=2)
    resumed, clients = _run(
        algorithm, "cpu", rounds=4, checkpoint_dir=tmp_path, resume=True
    )
    assert clients[0].table.device.type == "cpu"
    assert _curve(resumed) == pytest.approx(_curve(full), abs=2e-3)
    assert resumed.test["mrr"] == pytest.approx(full.test["mrr"], abs=2e-3)


def _baseline(tmp_path, device: str, setting: str = "independent", **kw):
    from fedgraph.partition import save_partition
    from fedgraph.runtime.baselines import run_baseline

    data = tmp_path / "toy"
    if not data.exists():
        save_partition(toy_federation(), data)
    return run_baseline(
        data,
        setting=setting,
        hidden_channels=8,
        gamma=4.0,
        out=tmp_path / f"{setting}-{device}",
        lr=1e-2,
        batch_size=16,
        num_negatives=4,
        eval_every=2,
        max_epochs=6,
        device=device,
        **kw,
    )


def test_baseline_records_its_device_and_checkpoints_cpu_tensors(tmp_path):
    res = _baseline(tmp_path, "cpu")
    doc = json.loads(Path(res["path"]).read_text())
    assert doc["settings"]["device"] == "cpu"
    state = torch.load(tmp_path / "independent-cpu" / "trainer0.pt", weights_only=False)
    assert all(t.device.type == "cpu" for t in state["best_state"].values())


@cuda
@pytest.mark.parametrize("setting", ["independent", "centralized"])
def test_gpu_baseline_matches_cpu_baseline(tmp_path, setting):
    cpu = _baseline(tmp_path, "cpu", setting)
    gpu = _baseline(tmp_path, "cuda", setting)
    assert gpu["weighted"]["mrr"] == pytest.approx(cpu["weighted"]["mrr"], abs=2e-3)
    state = torch.load(tmp_path / f"{setting}-cuda" / "trainer0.pt", weights_only=False)
    assert all(t.device.type == "cpu" for t in state["model"].values())
