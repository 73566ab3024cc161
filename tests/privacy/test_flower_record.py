r"""``privacy.record-uploads`` in the Flower apps of
:mod:`fedgraph.privacy.flower`: the ``ServerApp`` (over
:class:`~fedgraph.runtime.flower.LocalGrid`, every message taken apart into
Flower's wire objects) records what it receives in the files of ``fedgraph
train --record-uploads``, and ``fedgraph audit`` runs on its ``out``
folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("flwr")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flower import EVAL_EVERY, ROUNDS, SETTINGS, run_config  # noqa: E402
from test_flower_defences import named_toy  # noqa: E402

from fedgraph.cli.main import main  # noqa: E402
from fedgraph.partition import save_partition  # noqa: E402
from fedgraph.privacy.audit import run_audit  # noqa: E402
from fedgraph.privacy.flower import (  # noqa: E402
    PrivateRunSettings,
    client_app,
    server_app,
)
from fedgraph.privacy.record import (  # noqa: E402
    load_registration,
    load_round,
    recorded_rounds,
    round_file,
)
from fedgraph.privacy.secagg_masks import MASKED  # noqa: E402
from fedgraph.runtime.flower import run_local  # noqa: E402
from fedgraph.runtime.flower.federation import load_federation  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_federation_cache(one_thread):
    yield
    load_federation.cache_clear()


def _train(data: Path, out: Path, *extra: str) -> None:
    r"""``fedgraph train`` with the settings of :func:`run_config`."""
    argv = [
        "train", str(data), "--algorithm", "fede", "--out", str(out),
        "--rounds", str(ROUNDS), "--eval-every", str(EVAL_EVERY), "--quiet",
        *(a for k, v in SETTINGS.items() if k != "model"
          for a in (f"--{k.replace('_', '-')}", str(v))),
        *extra,
    ]  # fmt: skip
    assert main(argv) == 0


def _equal(a, b) -> bool:
    r"""Bit-for-bit equality of two recorded objects (same tensor dtypes)."""
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and set(a) == set(b)
            and all(_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    return a == b


def _audit(run_dir: Path, attack: str) -> dict:
    report = run_audit(run_dir, attack)
    keys = ("round", "clients", "mean", "baseline", "knowledge_only", "privacy")
    return {k: report.get(k) for k in keys}


@pytest.mark.parametrize(
    "keep,flags",
    [
        ("all", {}),
        # SecAgg: what the ServerApp receives is one masked vector a client
        # (under keys drawn afresh in each run) and the unmasked sums
        ("last", {"privacy.secagg": True}),
    ],
)
def test_a_deployment_records_the_uploads_of_the_simulation(tmp_path, keep, flags):
    data = save_partition(named_toy(), tmp_path / "toy3")
    sim, dep = tmp_path / "sim", tmp_path / "dep"
    secagg = bool(flags)
    _train(data, sim, "--record-uploads", keep, *(["--secagg"] if secagg else []))
    cfg = run_config(data, "fede", dep, **{"privacy.record-uploads": keep, **flags})
    run_local(server_app, client_app, cfg, num_nodes=3)
    doc = json.loads((dep / "results.json").read_text())
    assert doc["settings"]["privacy"]["record_uploads"] == keep

    rounds = list(range(1, ROUNDS + 1)) if keep == "all" else [ROUNDS]
    assert (
        recorded_rounds(sim / "uploads") == recorded_rounds(dep / "uploads") == rounds
    )
    # no temporary file left beside them (each is written, then renamed)
    files = sorted(f.name for f in (dep / "uploads").iterdir())
    assert files == sorted(["registration.pt", *(round_file(r) for r in rounds)])
    for r in rounds:
        a, b = load_round(sim / "uploads", r), load_round(dep / "uploads", r)
        if not secagg:  # every upload and the aggregate, bit for bit
            assert _equal(a, b)
            continue
        # the masks cancel exactly: the unmasked table and counts are the
        # simulation's bit for bit; each masked vector has its shape and range
        assert _equal(a["aggregate"], b["aggregate"])
        assert a["aggregate"]["counts"] is not None
        assert sorted(a["uploads"]) == sorted(b["uploads"]) == [0, 1, 2]
        for c, up in b["uploads"].items():
            assert list(up["arrays"]) == [MASKED] and not up["row_ids"]
            masked = up["arrays"][MASKED]
            assert masked.shape == a["uploads"][c]["arrays"][MASKED].shape
            assert masked.numel() == 15 * (SETTINGS["dim"] + 1)
            assert 0 <= int(masked.min()) and int(masked.max()) < 2**32
    regs = load_registration(sim / "uploads"), load_registration(dep / "uploads")
    if secagg:  # a public key each
        assert [list(p["arrays"]) for p in regs[1].values()] == [
            list(p["arrays"]) for p in regs[0].values()
        ]
    else:
        assert _equal(*regs)

    # the audit of the deployment's `out` gives the simulation's numbers
    for attack in ("triple-inference", "membership"):
        assert _audit(dep, attack) == _audit(sim, attack)
    assert main(["audit", str(dep), "--attack", "membership"]) == 0
    report = json.loads((dep / "audit-membership.json").read_text())
    assert report["round"] == ROUNDS and sorted(report["clients"]) == ["0", "1", "2"]
    if secagg:  # the holder counts over 3 clients, not the clients' ids
        assert report["attacker_knowledge"].startswith("what the server received")


def test_a_deployment_without_recording_is_refused_by_the_audit(tmp_path, capsys):
    data = save_partition(named_toy(), tmp_path / "toy3")
    out = tmp_path / "dep"
    run_local(server_app, client_app, run_config(data, "fede", out), num_nodes=3)
    assert main(["audit", str(out), "--attack", "membership"]) == 2
    err = capsys.readouterr().err.strip()
    assert "privacy.record-uploads" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "extra,message",
    [
        (
            {"privacy.record-uploads": "every", "out": "o"},
            r"^Run-config key `privacy.record-uploads` must be one of "
            r"\('', 'last', 'all'\) \(got 'every'\)$",
        ),
        (
            {"privacy.record-uploads": 1, "out": "o"},
            "Run-config key `privacy.record-uploads` must be a string",
        ),
        (
            {"privacy.record-uploads": "last"},
            "`privacy.record-uploads` records under `out`/uploads: set `out`",
        ),
    ],
)
def test_a_bad_record_uploads_value_is_a_one_line_error_naming_the_key(extra, message):
    with pytest.raises(ValueError, match=message) as err:
        PrivateRunSettings.from_run_config({"data": "x", "algorithm": "fede", **extra})
    assert "\n" not in str(err.value)


def _nodes(tmp_path: Path) -> list[dict]:
    return [
        {"partition-id": i, "state-dir": str(tmp_path / f"node{i}")} for i in range(3)
    ]


def _files(uploads: Path) -> dict[str, bytes]:
    r"""Every file under ``uploads`` (temporary ones included), name → bytes."""
    return {f.name: f.read_bytes() for f in sorted(uploads.iterdir())}


@pytest.mark.parametrize(
    "keep,flags", [("all", {}), ("last", {}), ("all", {"privacy.secagg": True})]
)
def test_a_recorded_deployment_stopped_and_resumed_records_the_whole_runs_uploads(
    tmp_path, keep, flags
):
    import shutil

    from fedgraph.privacy.flower import run_private_server
    from fedgraph.runtime.flower import LocalGrid

    data = save_partition(named_toy(), tmp_path / "toy3")
    record = {"privacy.record-uploads": keep, **flags}
    whole = run_config(data, "fede", tmp_path / "whole", **record)
    run_private_server(LocalGrid(client_app, _nodes(tmp_path / "w"), whole), whole)

    ckpt = tmp_path / "ckpt"
    cfg = run_config(
        data, "fede", tmp_path / "resumed", **record,
        **{"checkpoint-dir": str(ckpt), "run-name": "toy"},
    )  # fmt: skip
    resumed = {**cfg, "resume": True}
    nodes = _nodes(tmp_path / "r")
    # Killed after round 2: the rounds so far are on disk, whole files only
    _, partial = run_private_server(
        LocalGrid(client_app, nodes, cfg), cfg, stop_after=2
    )
    assert partial.rounds == 2
    uploads = tmp_path / "resumed" / "uploads"
    before = _files(uploads)
    stopped = [1, 2] if keep == "all" else [2]
    assert sorted(before) == sorted(
        ["registration.pt", *(round_file(r) for r in stopped)]
    )
    # Resumed, then killed after round 3 was recorded but before the server's
    # round-3 checkpoint (its round-2 checkpoint put back): the next resumed
    # run records round 3 again
    shutil.copytree(ckpt, tmp_path / "ckpt2")
    grid = LocalGrid(client_app, nodes, resumed)
    assert run_private_server(grid, resumed, stop_after=1)[1].rounds == 3
    third = _files(uploads)[round_file(3)]
    shutil.rmtree(ckpt)
    shutil.copytree(tmp_path / "ckpt2", ckpt)
    # ... and a new Flower run (fresh node contexts) resumes it to the end
    run_private_server(LocalGrid(client_app, nodes, resumed), resumed)

    after, expected = _files(uploads), _files(tmp_path / "whole" / "uploads")
    rounds = [1, 2, 3, ROUNDS] if keep == "all" else [ROUNDS]
    assert recorded_rounds(uploads) == rounds
    # nothing lost, doubled or left over
    assert sorted(after) == sorted(expected)
    if keep == "all":  # the rounds before the stop are the first run's files,
        assert {k: after[k] for k in before} == before
        assert after[round_file(3)] == third  # and round 3 recorded again the same
    if not flags:  # the whole run's files, bit for bit
        assert after == expected
    else:  # SecAgg: each run draws its own keys; the sums are the whole run's
        for r in rounds:
            a, b = load_round(uploads, r), load_round(tmp_path / "whole" / "uploads", r)
            assert _equal(a["aggregate"], b["aggregate"])
            assert sorted(a["uploads"]) == sorted(b["uploads"]) == [0, 1, 2]
    for attack in ("triple-inference", "membership"):
        assert _audit(tmp_path / "resumed", attack) == _audit(
            tmp_path / "whole", attack
        )


def test_a_new_run_in_a_used_out_folder_is_refused_or_records_only_its_rounds(
    tmp_path,
):
    # `out` holds a finished 4-round run: a new run there is refused before it
    # writes anything. With that run's results.json moved away (an unfinished
    # earlier run), a new run of 2 rounds records its own rounds only: the
    # audit's default round is the new run's last
    data = save_partition(named_toy(), tmp_path / "toy3")
    out = tmp_path / "dep"
    record = {"privacy.record-uploads": "all"}
    run_local(server_app, client_app, run_config(data, "fede", out, **record), 3)
    assert recorded_rounds(out / "uploads") == [1, 2, 3, 4]
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    again = run_config(data, "fede", out, **record, **{"num-rounds": 2})
    with pytest.raises(ValueError, match=r"`out`: .*results\.json holds an earlier"):
        run_local(server_app, client_app, again, num_nodes=3)
    after = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before
    (out / "results.json").rename(tmp_path / "kept.json")
    run_local(server_app, client_app, again, num_nodes=3)
    assert recorded_rounds(out / "uploads") == [1, 2]
    assert load_round(out / "uploads")["round"] == 2


def test_recording_a_fusion_run_records_the_training_rounds_and_fuses_the_same(
    tmp_path,
):
    # The recorder stores the registrations and training replies; the fusion
    # exchange after the test pass (the test payload down, ranking sums up)
    # bypasses the strategy. So a fusion run records what a run without
    # fusion records, and fuses as a run without recording does.
    from fedgraph.privacy.flower import run_private_server
    from fedgraph.runtime.flower import LocalGrid

    data = save_partition(named_toy(), tmp_path / "toy3")
    single = tmp_path / "single"
    argv = ["train", str(data), "--algorithm", "independent",
            "--out", str(single), "--rounds", str(ROUNDS),
            "--eval-every", str(EVAL_EVERY), "--quiet", "--dim", "8",
            "--gamma", "4", "--lr", "0.01", "--batch-size", "16",
            "--num-negatives", "4", "--seed", "0"]  # fmt: skip
    assert main(argv) == 0
    nodes = [{"partition-id": i, "single-dir": str(single)} for i in range(3)]
    fusion = {"fusion.enabled": True, "fusion.epochs": 5, "fusion.batch-size": 8}
    record = {"privacy.record-uploads": "all"}
    runs = {
        "fused": fusion,
        "recorded": record,
        "both": {**fusion, **record},
    }
    for name, extra in runs.items():
        cfg = run_config(data, "fede", tmp_path / name, **extra)
        run_private_server(LocalGrid(client_app, nodes, cfg), cfg)

    def doc(*parts):
        return json.loads(tmp_path.joinpath(*parts, "results.json").read_text())

    # the fusion results of the run without recording
    a, b = doc("fused", "fusion"), doc("both", "fusion")
    for key in ("weighted", "weighted_single", "weighted_federated", "clients"):
        assert a[key] == b[key], key
    assert a["comm"] == b["comm"] and b["comm"]["params_up"] == 0
    assert doc("both")["weighted"] == doc("fused")["weighted"]
    assert doc("both")["settings"]["privacy"]["record_uploads"] == "all"
    # the recording of the run without fusion, byte for byte
    uploads = _files(tmp_path / "both" / "uploads")
    assert uploads == _files(tmp_path / "recorded" / "uploads")
    assert sorted(uploads) == sorted(
        ["registration.pt", *(round_file(r) for r in range(1, ROUNDS + 1))]
    )
    assert not (tmp_path / "fused" / "uploads").exists()
