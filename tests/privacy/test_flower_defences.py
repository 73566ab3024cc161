r"""Secure aggregation and private entity alignment in the Flower apps of
:mod:`fedgraph.privacy.flower` (run-config keys ``privacy.*``): the real
``ServerApp``/``ClientApp`` over
:class:`~fedgraph.runtime.flower.LocalGrid`, which takes every message apart
into Flower's wire objects; the deployment with real processes is the
``slow`` test at the end."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("flwr")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from test_flower import (  # noqa: E402
    EVAL_EVERY,
    ROUNDS,
    SETTINGS,
    run_config,
    simulate,
    toy_federation,
)

from fedgraph.data.shard import FederatedKG  # noqa: E402
from fedgraph.federated.payload import PayloadError  # noqa: E402
from fedgraph.partition import save_partition  # noqa: E402
from fedgraph.privacy.alignment import entity_tokens  # noqa: E402
from fedgraph.privacy.flower import (  # noqa: E402
    PrivateRunSettings,
    client_app,
    privacy_defaults,
    server_app,
)
from fedgraph.runtime.flower import LocalGrid, run_local  # noqa: E402
from fedgraph.runtime.flower.federation import load_federation  # noqa: E402

SECRET = "00112233445566778899aabbccddeeff" * 2
# 2^24 levels on [-8, 8]: each aggregated coordinate within half a step
# (4.8e-7) of FedE's; a few rounds of training keep the metrics within 1e-4.
TOLERANCE = 1e-4


@pytest.fixture(autouse=True)
def _fresh_federation_cache(one_thread):
    yield
    load_federation.cache_clear()


def named_toy() -> FederatedKG:
    fed = toy_federation()
    names = [f"/m/entity_{i:02d}" for i in range(fed.num_entities)]
    return FederatedKG(fed.shards, fed.num_entities, fed.num_relations, names)


@pytest.fixture
def partition(tmp_path):
    return save_partition(named_toy(), tmp_path / "toy3")


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "client-side" / "secret.key"
    path.parent.mkdir()
    path.write_text(SECRET + "\n")
    return path


class RecordingGrid(LocalGrid):
    r"""A :class:`LocalGrid` that keeps every message the server pulls."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = []

    def pull_messages(self, message_ids):
        out = list(super().pull_messages(message_ids))
        self.received.extend(out)
        return out


def _run(grid, cfg):
    from flwr.app import Context, RecordDict

    context = Context(
        run_id=grid.run.run_id, node_id=0, node_config={}, state=RecordDict(),
        run_config=dict(cfg),
    )  # fmt: skip
    server_app(grid, context)
    return grid


def _curve(history):
    return [h["valid"]["mrr"] for h in history if "valid" in h]


# ------------------------------------------------------------------ SecAgg
def test_secagg_deployment_equals_fede_within_the_quantisation(partition, tmp_path):
    strategy, _, plain = simulate(partition, "fede")
    out = tmp_path / "out"
    cfg = run_config(partition, "fede", out, **{"privacy.secagg": True})
    grid = RecordingGrid(client_app, [{"partition-id": i} for i in range(3)], cfg)
    _run(grid, cfg)
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["privacy"]["secagg"] is True
    assert "SecAggStrategy" in doc["settings"]["strategy"]
    assert doc["rounds"] == plain.rounds == ROUNDS
    curve, reference = _curve(doc["history"]), _curve(plain.history)
    assert len(curve) == ROUNDS // EVAL_EVERY
    assert curve == pytest.approx(reference, abs=TOLERANCE)
    assert doc["weighted"]["mrr"] == pytest.approx(plain.test["mrr"], abs=TOLERANCE)
    # the server's table is FedE's up to the quantisation
    server = torch.load(out / "server.pt", weights_only=False)
    assert torch.allclose(server["strategy"]["table"], strategy.table, atol=1e-4)
    # every training reply carried one masked integer vector and no entity id
    trains = [m for m in grid.received if m.metadata.message_type == "train"]
    assert len(trains) == 3 * ROUNDS
    for m in trains:
        arrays = m.content["arrays"]
        assert list(arrays) == ["secagg-masked"] and len(m.content["row-ids"]) == 0
        masked = arrays["secagg-masked"].numpy()
        assert masked.size == 15 * (SETTINGS["dim"] + 1)
        assert masked.min() >= 0 and masked.max() < 2**32
    registrations = [
        m for m in grid.received if m.metadata.message_type == "query.register"
    ]
    assert [list(m.content["arrays"]) for m in registrations] == [
        ["secagg-public-key"]
    ] * 3


def test_secagg_with_compact_messages_equals_the_plain_layout(partition, tmp_path):
    # the packed layout (`compact-messages`) carries the same masked vectors:
    # the run is the plain layout's, bit for bit
    from fedgraph.runtime.flower.protocol import from_content

    docs, grids = [], []
    for compact in (False, True):
        out = tmp_path / f"out-{compact}"
        cfg = run_config(
            partition,
            "fede",
            out,
            **{"privacy.secagg": True, "compact-messages": compact},
        )
        grid = RecordingGrid(client_app, [{"partition-id": i} for i in range(3)], cfg)
        grids.append(_run(grid, cfg))
        doc = json.loads((out / "results.json").read_text())
        docs.append({k: doc[k] for k in ("weighted", "comm", "comm_per_round")})
        docs[-1]["curve"] = _curve(doc["history"])
    assert docs[1] == docs[0]
    trains = [m for m in grids[1].received if m.metadata.message_type == "train"]
    assert len(trains) == 3 * ROUNDS
    for m in trains:
        assert list(m.content) == ["fedgraph-packed"]  # the vector inline
        payload, _ = from_content(m.content)
        assert list(payload.arrays) == ["secagg-masked"] and not payload.row_ids


@pytest.mark.parametrize(
    "algorithm,fraction,extra",
    [
        ("fede", 2 / 3, {}),
        # two sampled clients a round: each holds the shares of both (T = 2)
        ("fede", 2 / 3, {"privacy.secagg-threshold": 2, "accept-failures": True}),
        ("fedr", 1.0, {}),  # masked relation sums
        ("fedprox", 1.0, {"privacy.secagg-threshold": 2, "accept-failures": True}),
    ],
)
def test_secagg_deployment_equals_the_plain_run(
    partition, tmp_path, algorithm, fraction, extra
):
    _, _, plain = simulate(partition, algorithm, fraction)
    out = tmp_path / "out"
    cfg = run_config(
        partition, algorithm, out, fraction=fraction,
        **{"privacy.secagg": True, **extra},
    )  # fmt: skip
    run_local(server_app, client_app, cfg, num_nodes=3)
    doc = json.loads((out / "results.json").read_text())
    assert [h["clients"] for h in doc["history"]] == [
        h["clients"] for h in plain.history
    ]
    assert _curve(doc["history"]) == pytest.approx(_curve(plain.history), abs=TOLERANCE)
    assert doc["weighted"]["mrr"] == pytest.approx(plain.test["mrr"], abs=TOLERANCE)


def test_secagg_settings_reach_both_sides(partition, tmp_path):
    # SecAgg+'s ring (one neighbour a side) and a coarser quantisation (clip
    # to [-4, 4], 2^17 levels: a step of 6.1e-5): the clients mask and
    # quantise as the server unmasks (a mismatch would leave noise), and the
    # run is FedE's up to the coarser step
    from fedgraph.privacy.flower import PRIVATE_ALIGNMENT, build_private_strategy
    from fedgraph.privacy.secagg import SecAggStrategy
    from fedgraph.privacy.wrap import find_wrapper
    from fedgraph.runtime.flower import run_server

    _, _, plain = simulate(partition, "fede")
    out = tmp_path / "out"
    cfg = run_config(
        partition, "fede", out,
        **{"privacy.secagg": True, "privacy.secagg-neighbours": 1,
           "privacy.secagg-clip-range": 4.0, "privacy.secagg-levels": 2**17},
    )  # fmt: skip
    strategy, res = run_server(
        LocalGrid(client_app, [{"partition-id": i} for i in range(3)], cfg),
        cfg,
        build_strategy=build_private_strategy,
        parse=PrivateRunSettings.from_run_config,
        alignment=PRIVATE_ALIGNMENT,
    )
    secagg = find_wrapper(strategy, SecAggStrategy)
    assert (secagg.num_neighbours, secagg.clip_range, secagg.levels) == (1, 4.0, 2**17)
    assert _curve(res.history) == pytest.approx(_curve(plain.history), abs=2e-3)


def test_secagg_stops_a_round_that_lost_a_client(partition, tmp_path):
    # Without the lost client's masks the sum cannot be unmasked: the run
    # stops naming it rather than aggregating noise.
    out = tmp_path / "out"
    cfg = run_config(
        partition, "fede", out,
        **{"privacy.secagg": True, "accept-failures": True},
    )  # fmt: skip

    class Losing(LocalGrid):
        def _handle(self, message):
            if (
                message.metadata.message_type == "train"
                and self.contexts[message.metadata.dst_node_id].node_config[
                    "partition-id"
                ]
                == 1
            ):
                raise_lost = RuntimeError("node lost")
                from flwr.app import Error, Message
                from flwr.common.constant import ErrorCode

                return Message(
                    Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION,
                          reason=str(raise_lost)),
                    reply_to=message,
                )  # fmt: skip
            return super()._handle(message)

    grid = Losing(client_app, [{"partition-id": i} for i in range(3)], cfg)
    with pytest.raises(PayloadError, match="round 1: no masked vector from client 1"):
        _run(grid, cfg)
    status = json.loads((out / "status.json").read_text())
    assert status["status"] == "failed" and "cannot be unmasked" in status["error"]


# -------------------------------------------------------- private alignment
def _strings(record):
    r"""Every string and byte string of a Flower record (keys included)."""
    from flwr.app import ArrayRecord

    out = [str(k) for k in record]
    if not isinstance(record, ArrayRecord):
        for v in record.values():
            items = v if isinstance(v, list) else [v]
            out += [x.decode("latin-1") if isinstance(x, bytes) else str(x)
                    for x in items]  # fmt: skip
    return out


def test_private_alignment_server_receives_no_name_and_no_global_id(
    partition, tmp_path, secret_file
):
    fed = named_toy()
    names = fed.entity_names
    out = tmp_path / "out"
    cfg = run_config(partition, "fede", out, **{"privacy.private-alignment": True})
    nodes = [
        {"partition-id": i, "alignment-secret": str(secret_file)} for i in range(3)
    ]
    grid = RecordingGrid(client_app, nodes, cfg)
    _run(grid, cfg)
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["privacy"]["private_alignment"] is True
    # nothing in the run config or the server's outputs names the secret file
    assert str(secret_file) not in json.dumps(doc)

    kinds = {m.metadata.message_type for m in grid.received}
    assert kinds == {"query.align", "query.register", "train", "evaluate"}
    tokens = entity_tokens(names, bytes.fromhex(SECRET))
    seen_ids = []
    for m in grid.received:
        assert not m.has_error()
        for name, record in m.content.items():
            # no entity name anywhere: not in a key, a config value or a metric
            for s in _strings(record):
                assert not any(n in s for n in names), (m.metadata.message_type, s)
            if name == "row-ids":
                seen_ids += [a.numpy() for a in record.values()]
            elif name == "arrays":  # the rows themselves: floating point only
                assert all(a.numpy().dtype.kind == "f" for a in record.values())
    # the alignment step: each node reports its partition id, the number of
    # clients and its tokens, no vocabulary size; the server's table has a
    # row per token of their union
    aligns = [m for m in grid.received if m.metadata.message_type == "query.align"]
    assert len(aligns) == 3
    for m in aligns:
        control = dict(m.content["fedgraph"])
        assert set(control) == {"partition-id", "num-clients", "entity-tokens"}
        seen_ids.append(torch.tensor(control["entity-tokens"]).numpy())
    ids = torch.cat([torch.from_numpy(a).long() for a in seen_ids])
    # alignment, registrations and 4 rounds of uploads, all keyed tokens: no raw
    # global id (0 … 14) and every one the HMAC of an entity's name ...
    assert ids.numel() == 3 * 7 * (2 + ROUNDS)
    assert int(ids.min()) > 2**40
    assert torch.isin(ids, tokens).all()
    # ... which another secret does not reproduce
    other = entity_tokens(names, bytes.fromhex("ff" * 32))
    assert not torch.isin(ids, other).any()


def test_private_alignment_equals_fede(partition, tmp_path, secret_file):
    # Alignment by tokens is lossless: the run is FedE's on the table whose
    # row of entity e is the server's row of e's token.
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.runtime import run_simulation

    out = tmp_path / "out"
    cfg = run_config(partition, "fede", out, **{"privacy.private-alignment": True})
    nodes = [
        {"partition-id": i, "alignment-secret": str(secret_file)} for i in range(3)
    ]
    _run(LocalGrid(client_app, nodes, cfg), cfg)
    doc = json.loads((out / "results.json").read_text())
    fed = named_toy()
    strategy, clients = build_kge_federation("fede", fed, KGESettings(**SETTINGS))
    rank = torch.argsort(
        torch.argsort(entity_tokens(fed.entity_names, bytes.fromhex(SECRET)))
    )
    strategy.table = strategy.table[rank].clone()
    res = run_simulation(
        strategy, clients, num_rounds=ROUNDS, eval_every=EVAL_EVERY,
        seed=SETTINGS["seed"], progress=False,
    )  # fmt: skip
    assert _curve(doc["history"]) == pytest.approx(_curve(res.history), abs=1e-6)


def test_private_alignment_needs_the_secret_on_every_node(partition, tmp_path, caplog):
    # the server learns the error's class; the node's log says what is missing
    failed = "ValueError: the client app failed on this node"
    cfg = run_config(partition, "fede", tmp_path / "out",
                     **{"privacy.private-alignment": True})  # fmt: skip
    with pytest.raises(Exception, match=failed):
        run_local(server_app, client_app, cfg, num_nodes=3)
    assert "needs the federation secret: --node-config" in caplog.text
    bad = tmp_path / "short.key"
    bad.write_text("abcd")
    nodes = [{"partition-id": i, "alignment-secret": str(bad)} for i in range(3)]
    with pytest.raises(Exception, match=failed):
        _run(LocalGrid(client_app, nodes, cfg), cfg)
    assert "must hold at least 16 bytes" in caplog.text


@pytest.mark.parametrize(
    "extra,message",
    [
        ({"privacy.secagg": "yes"}, "`privacy.secagg` must be a boolean"),
        ({"privacy.secagg-levels": 1.5}, "`privacy.secagg-levels` must be an integer"),
        (
            {"privacy.secagg": True, "privacy.private-alignment": True},
            "either it or private alignment",
        ),
        ({"privacy.secagg": True, "privacy.secagg-levels": 1}, "privacy"),
        ({"privacy.recorduploads": "all"}, "Unknown run-config key `privacy.rec"),
        (
            {"privacy.dp-epsilon": -1.0},
            "Run-config key `privacy.dp-epsilon` must be non-negative",
        ),
        ({"privacy.secagg": True, "fusion.enabled": True}, "does not combine"),
        # recording alone combines with fusion; a defence beside it does not
        (
            {
                "privacy.dp-epsilon": 1.0,
                "privacy.record-uploads": "all",
                "out": "o",
                "fusion.enabled": True,
            },
            "does not combine",
        ),
    ],
)
def test_privacy_run_config_errors_name_the_key(extra, message):
    with pytest.raises(ValueError, match=message):
        PrivateRunSettings.from_run_config({"data": "x", "algorithm": "fede", **extra})


def test_privacy_off_by_default_is_the_plain_app(partition, tmp_path):
    cfg = PrivateRunSettings.from_run_config(
        {"data": "x", "algorithm": "fede", **privacy_defaults()}
    )
    assert cfg.privacy is None
    # with every defence off the apps are the plain KGE apps, number for number
    _, _, plain = simulate(partition, "fede")
    out = tmp_path / "out"
    cfg = run_config(partition, "fede", out, **privacy_defaults())
    run_local(server_app, client_app, cfg, num_nodes=3)
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["privacy"] is None
    assert _curve(doc["history"]) == _curve(plain.history)
    assert doc["weighted"]["mrr"] == plain.test["mrr"]


# -------------------------------------------------------------------- UMLS
@pytest.mark.dataset
def test_secagg_deployment_equals_fede_validation_curve_on_umls(tmp_path):
    from fedgraph.data import load_dataset
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.partition import resolve_partitioner
    from fedgraph.runtime import run_simulation

    fed = resolve_partitioner("relation", 3, seed=0)(load_dataset("umls"))
    data = save_partition(fed, tmp_path / "umls-r3")
    settings = dict(dim=32, lr=0.001, batch_size=512, num_negatives=32)
    strategy, clients = build_kge_federation("fede", fed, KGESettings(**settings))
    plain = run_simulation(
        strategy, clients, num_rounds=3, eval_every=1, patience=0, progress=False,
        test=False,
    )  # fmt: skip
    out = tmp_path / "out"
    cfg = {
        "data": str(data), "algorithm": "fede", "num-rounds": 3, "eval-every": 1,
        "patience": 0, "test": False, "out": str(out), "privacy.secagg": True,
        **{k.replace("_", "-"): v for k, v in settings.items()},
    }  # fmt: skip
    run_local(server_app, client_app, cfg, num_nodes=3)
    doc = json.loads((out / "results.json").read_text())
    curve, reference = _curve(doc["history"]), _curve(plain.history)
    assert len(curve) == 3 and curve != [0.0] * 3
    assert curve == pytest.approx(reference, abs=TOLERANCE)


def test_the_private_example_app_lists_every_key_of_the_plain_one():
    # Flower only overrides keys the app lists: the private app lists the
    # plain app's keys with the same defaults, plus every privacy key (off).
    from flwr.common.config import get_fused_config_from_dir, get_project_config

    from fedgraph.privacy.flower import PRIVACY_KEYS

    examples = Path(__file__).parents[2] / "examples"
    plain = get_fused_config_from_dir(examples / "flower_app", {})
    private = get_fused_config_from_dir(examples / "flower_private_app", {})
    assert {k: v for k, v in private.items() if not k.startswith("privacy.")} == plain
    assert {k for k in private if k.startswith("privacy.")} == {
        f"privacy.{k}" for k in PRIVACY_KEYS
    }
    assert {k: private[k] for k in privacy_defaults()} == privacy_defaults()
    assert PrivateRunSettings.from_run_config(private).privacy is None
    components = get_project_config(examples / "flower_private_app")["tool"]["flwr"][
        "app"
    ]["components"]
    assert components == {
        "serverapp": "fedgraph.privacy.flower:server_app",
        "clientapp": "fedgraph.privacy.flower:node_app",
    }


# ------------------------------------------------- real processes (slow)
def _deploy(
    tmp_path,
    data,
    run_config,
    node_config="",
    env=None,
    during=None,
    poll=None,
    heartbeat=None,
):
    r"""A SuperLink and 3 SuperNodes on 127.0.0.1 (the launcher of
    ``benchmarks/flower_deploy.py``) running ``examples/flower_private_app``
    with ``run_config``; returns the run's ``results.json``. ``env`` adds
    to every process's environment (a ``PYTHONPATH`` entry is appended to
    fedgraph's); ``during(deployment)`` runs in a thread while the run does
    (e.g. to kill a node); ``poll`` (seconds) starts the SuperNodes with
    fedgraph's launcher and that idle poll (``--node-poll`` of the
    benchmark) instead of Flower's 3 s, and ``heartbeat`` (seconds, with
    ``poll``) their heartbeat interval instead of Flower's 30 s."""
    import importlib.util
    import shutil
    import threading
    import types

    from test_flower_deploy import free_ports

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "flower_deploy", root / "benchmarks" / "flower_deploy.py"
    )
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)

    class Deployment(launcher.Deployment):
        def start_node(self, k):
            if poll is None:
                start = [str(launcher.BIN / "flower-supernode")]
            else:
                start = [
                    sys.executable, "-m", "fedgraph.cli.flower_supernode",
                    "--idle-poll-interval", str(poll),
                ]  # fmt: skip
                if heartbeat is not None:
                    start += ["--heartbeat-interval", str(heartbeat)]
            cmd = [
                *start, "--insecure",
                "--superlink", f"127.0.0.1:{self.link_port}",
                "--host", "127.0.0.1", "--port", str(self.link_port + 1 + k),
                "--node-config", f"partition-id={k} {node_config}".strip(),
            ]  # fmt: skip
            self._start(f"node{k}", cmd, self.node_dir, self.node_env)

    work = tmp_path / "work"
    args = types.SimpleNamespace(
        port=free_ports(9600), tls=False, timeline=False, clientapp="worker"
    )
    dep = Deployment(work, data, 3, args)
    for key, value in (env or {}).items():
        for proc_env in (dep.server_env, dep.node_env):
            old = proc_env.get(key) if key == "PYTHONPATH" else None
            proc_env[key] = f"{old}{os.pathsep}{value}" if old else value
    app = work / "app"
    shutil.copytree(root / "examples" / "flower_private_app", app)
    out = work / "server" / "out"
    config = {**run_config, "data": "data", "out": str(out), "threads": 1}
    config["connect-timeout"] = 600.0
    if poll is not None:  # the ServerApp's retry of late reply objects too
        config["pull-backoff"] = 0.05
    text = " ".join(f"{k}={launcher.toml_value(v)}" for k, v in config.items())
    try:
        dep.start_superlink()
        dep.write_flwr_config()
        for k in range(3):
            dep.start_node(k)
        watcher = None
        if during is not None:
            watcher = threading.Thread(target=during, args=(dep,), daemon=True)
            watcher.start()
        rc = dep.run(app, text, lambda line: None)
        if watcher is not None:
            watcher.join(timeout=5)
    finally:
        dep.stop_all()
    status = json.loads((out / "status.json").read_text())
    assert rc == 0 and status["status"] == "completed", status
    return json.loads((out / "results.json").read_text())


@pytest.mark.slow
def test_a_secagg_deployment_equals_fede_and_private_alignment_the_local_run(
    tmp_path, secret_file
):
    data = save_partition(named_toy(), tmp_path / "toy3")
    toy = {k.replace("_", "-"): v for k, v in SETTINGS.items()}
    base = {"algorithm": "fede", "num-rounds": 3, "eval-every": 1, **toy}
    base["patience"] = 0
    # SecAgg: FedE's validation curve within the quantisation tolerance
    doc = _deploy(tmp_path / "secagg", data, {**base, "privacy.secagg": True})
    local = {**base, "data": str(data), "out": str(tmp_path / "plain")}
    run_local(server_app, client_app, local, num_nodes=3)
    plain = json.loads((tmp_path / "plain" / "results.json").read_text())
    assert "SecAggStrategy" in doc["settings"]["strategy"]
    assert len(_curve(doc["history"])) == 3
    assert _curve(doc["history"]) == pytest.approx(
        _curve(plain["history"]), abs=TOLERANCE
    )
    # private alignment: the secret only on the nodes; the numbers of the
    # in-process apps
    private = {**base, "privacy.private-alignment": True}
    doc = _deploy(
        tmp_path / "aligned", data, private, f"alignment-secret='{secret_file}'"
    )
    nodes = [
        {"partition-id": i, "alignment-secret": str(secret_file)} for i in range(3)
    ]
    cfg = {**private, "data": str(data), "out": str(tmp_path / "local")}
    _run(LocalGrid(client_app, nodes, cfg), cfg)
    local_doc = json.loads((tmp_path / "local" / "results.json").read_text())
    assert _curve(doc["history"]) == _curve(local_doc["history"])
    assert doc["weighted"] == local_doc["weighted"]


# ------------------------------------------------------ dropout recovery
class LosingGrid(LocalGrid):
    r"""Client ``lose``'s node fails its round-``at`` training (its masked
    input, under SecAgg+) and is back for the next round."""

    lose, at = 1, 2

    def _handle(self, message):
        from flwr.app import Error, Message
        from flwr.common.constant import ErrorCode

        from fedgraph.privacy.secagg_plus import STAGE
        from fedgraph.runtime.flower.protocol import SERVER_ROUND, from_content

        node = self.contexts[message.metadata.dst_node_id].node_config
        payload, control = from_content(message.content)
        if (
            message.metadata.message_type == "train"
            and node["partition-id"] == self.lose
            and control.get(SERVER_ROUND) == self.at
            and STAGE not in payload.config
        ):
            error = Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason="lost")
            return Message(error, reply_to=message)
        return super()._handle(message)


def test_secagg_plus_recovers_the_sum_of_a_round_that_lost_a_node(partition, tmp_path):
    nodes = [{"partition-id": i} for i in range(3)]
    runs = {}
    for name, extra in (
        ("plain", {}),
        ("secagg", {"privacy.secagg": True, "privacy.secagg-threshold": 2}),
    ):
        out = tmp_path / name
        extra = {"accept-failures": True, "privacy.record-uploads": "all", **extra}
        cfg = run_config(partition, "fede", out, **extra)
        grid = type("G", (LosingGrid, RecordingGrid), {})(client_app, nodes, cfg)
        _run(grid, cfg)
        runs[name] = (json.loads((out / "results.json").read_text()), grid)
    plain, secure = runs["plain"][0], runs["secagg"][0]
    # round 2 went on without client 1 in both runs (which then leave the
    # lost node out), and the survivors' sum was unmasked: FedE's aggregate
    # over clients 0 and 2
    events = [
        sorted((e["event"], e["client"], e["round"]) for h in d["history"]
               for e in h.get("events", []))
        for d in (plain, secure)
    ]  # fmt: skip
    assert events[0] == events[1] and ("failed", 1, 2) in events[0]
    assert _curve(secure["history"]) == pytest.approx(
        _curve(plain["history"]), abs=TOLERANCE
    )
    # what the ServerApp recorded of round 2: the survivors' replies only (a
    # masked vector each, with the setup and unmask replies), and a table that
    # is the plain run's over the survivors up to the quantisation
    from fedgraph.privacy.record import load_round

    rec = {name: load_round(tmp_path / name / "uploads", 2) for name in runs}
    assert sorted(rec["plain"]["uploads"]) == sorted(rec["secagg"]["uploads"]) == [0, 2]
    for up in rec["secagg"]["uploads"].values():
        assert "secagg-masked" in up["arrays"] and not up["row_ids"]
    table = rec["secagg"]["aggregate"]["entity"]
    assert torch.allclose(table, rec["plain"]["aggregate"]["entity"], atol=1e-5)
    # three training exchanges a round (setup, masked input, unmask): 3 x 3
    # replies in round 1; in round 2 client 1's masked input is an error reply
    # and it is asked for no share; then the lost node is left out
    received = runs["secagg"][1].received
    trains = [m for m in received if m.metadata.message_type == "train"]
    assert len(trains) == 9 + (3 + 3 + 2) + 2 * (2 + 2 + 2)
    assert sum(m.has_error() for m in trains) == 1


@pytest.mark.slow
def test_a_supernode_killed_mid_round_under_secagg_plus_leaves_the_survivors_sum(
    tmp_path,
):
    # Real processes: the SuperNode of client 1 is killed (SIGKILL to its
    # process group) while it holds round 1's masked-input message, after the
    # setup exchange gave the server its round key and the others its shares.
    # With threshold 2 the server rebuilds its round key from the survivors'
    # shares, and the round's table is plain FedE's over clients 0 and 2 (the
    # same apps without SecAgg, in process, with client 1 failing there).
    import time

    from fedgraph.privacy.record import load_round
    from fedgraph.privacy.secagg_plus import SK_SHARE, STAGE_REPLIES

    data = save_partition(named_toy(), tmp_path / "toy3")
    marker = tmp_path / "paused"
    toy = {k.replace("_", "-"): v for k, v in SETTINGS.items()}
    base = {
        "algorithm": "fede", "num-rounds": 1, "eval-every": 1, "patience": 0,
        "test": False, "accept-failures": True, **toy,
        "privacy.record-uploads": "all",
    }  # fmt: skip
    secure = {
        **base, "privacy.secagg": True, "privacy.secagg-threshold": 2,
        "client-mods": "node_faults:pause_masked_input",
    }  # fmt: skip
    killed = []

    def kill_when_paused(dep):
        deadline = time.monotonic() + 600
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if marker.exists():
            dep.kill_node(1)
            killed.append(time.monotonic())

    env = {
        "PYTHONPATH": str(Path(__file__).resolve().parent),
        "FEDGRAPH_PAUSE_NODE": f"1:1:{marker}",
    }
    doc = _deploy(
        tmp_path / "dep",
        data,
        secure,
        env=env,
        during=kill_when_paused,
        poll=0.2,
        heartbeat=10,  # the node is reported gone within 20 s of its kill
    )
    assert killed, "client 1 never reached round 1's masked input"
    out = tmp_path / "dep" / "work" / "server" / "out"
    (entry,) = doc["history"]
    assert entry["clients"] == [0, 1, 2]
    # lost in the training exchange (the SuperLink reports the node gone
    # once it misses two 10 s heartbeats), then left out of the validation
    events = [(e["event"], e["client"], e["stage"]) for e in entry["events"]]
    assert events == [("failed", 1, "train"), ("skipped", 1, "evaluate")]
    # the ServerApp received masked vectors from the survivors only, and
    # from each its share of client 1's round key (client 1 had set up)
    rec = load_round(out / "uploads", 1)
    assert sorted(rec["uploads"]) == [0, 2]
    for up in rec["uploads"].values():
        assert "secagg-masked" in up["arrays"] and not up["row_ids"]
        assert f"{STAGE_REPLIES}{SK_SHARE}1" in up["arrays"]
    # ... and unmasked their sum: plain FedE's table over clients 0 and 2 up
    # to the quantisation, with their holder counts
    nodes = [{"partition-id": i} for i in range(3)]
    plain = {**base, "data": str(data), "out": str(tmp_path / "plain")}
    grid = type("Lose1", (LosingGrid,), {"at": 1})(client_app, nodes, plain)
    _run(grid, plain)
    ref = load_round(tmp_path / "plain" / "uploads", 1)
    assert sorted(ref["uploads"]) == [0, 2]
    table = rec["aggregate"]["entity"]
    assert torch.allclose(table, ref["aggregate"]["entity"], atol=1e-6)
    fed = named_toy()
    counts = torch.zeros(fed.num_entities, dtype=torch.long)
    for c in (0, 2):
        counts[fed.shards[c].entity_ids] += 1
    assert torch.equal(rec["aggregate"]["counts"], counts)
    local = json.loads((tmp_path / "plain" / "results.json").read_text())
    assert _curve(doc["history"]) == pytest.approx(
        _curve(local["history"]), abs=TOLERANCE
    )


def test_secagg_threshold_needs_accept_failures():
    with pytest.raises(ValueError, match="needs `accept-failures = true`"):
        PrivateRunSettings.from_run_config(
            {"data": "x", "algorithm": "fede", "privacy.secagg": True,
             "privacy.secagg-threshold": 2}
        )  # fmt: skip


@pytest.mark.parametrize(
    "extra",
    [
        {"privacy.secagg": True},
        {"privacy.secagg": True, "privacy.secagg-threshold": 2},
        {"privacy.private-alignment": True},
    ],
)
def test_a_checkpointed_private_run_resumes_with_identical_numbers(
    partition, tmp_path, secret_file, extra
):
    # the clients' identity keys and the server's registered keys (or the
    # server's tokens) travel in the checkpoints: a run killed after round 3
    # and resumed in a new Flower run ends with the numbers of a whole run
    from test_flower import _comparable

    from fedgraph.privacy.flower import (
        PRIVATE_ALIGNMENT,
        build_private_strategy,
        wrap_transport,
    )
    from fedgraph.runtime.flower import run_server

    kwargs = dict(
        build_strategy=build_private_strategy,
        parse=PrivateRunSettings.from_run_config,
        alignment=PRIVATE_ALIGNMENT,
        wrap_transport=wrap_transport,
    )
    extra = {**extra, "accept-failures": True}
    nodes = [
        {"partition-id": i, "state-dir": str(tmp_path / f"node{i}"),
         "alignment-secret": str(secret_file)}
        for i in range(3)
    ]  # fmt: skip
    whole = run_config(partition, "fede", tmp_path / "whole", **extra)
    run_server(LocalGrid(client_app, nodes, whole), whole, **kwargs)
    ckpt = {"checkpoint-dir": str(tmp_path / "ckpt"), "run-name": "toy"}
    cfg = run_config(partition, "fede", tmp_path / "resumed", **extra, **ckpt)
    _, partial = run_server(
        LocalGrid(client_app, nodes, cfg), cfg, stop_after=3, **kwargs
    )
    assert partial.rounds == 3
    resumed_cfg = {**cfg, "resume": True}
    run_server(LocalGrid(client_app, nodes, resumed_cfg), resumed_cfg, **kwargs)
    resumed = json.loads((tmp_path / "resumed" / "results.json").read_text())
    expected = json.loads((tmp_path / "whole" / "results.json").read_text())
    assert _comparable(resumed) == _comparable(expected)


# ----------------------------------------------------------------------- DP
@pytest.mark.parametrize("extra", [{}, {"privacy.private-alignment": True}])
def test_dp_deployment_equals_the_dp_simulation(
    partition, tmp_path, secret_file, extra
):
    # DP on uploads: the same seeded noise on the nodes as in `fedgraph train
    # --dp-epsilon`, so the numbers are the simulation's, and results.json
    # reports each client's epsilon as `fedgraph train` does
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.privacy.setup import PrivacySettings, apply_privacy, privacy_report
    from fedgraph.runtime import run_simulation

    fed = named_toy()
    strategy, clients = build_kge_federation("fede", fed, KGESettings(**SETTINGS))
    settings = PrivacySettings(dp_epsilon=4.0, dp_clip=0.5)
    strategy, clients = apply_privacy(
        strategy, clients, settings, rounds=ROUNDS, run_dir=tmp_path / "sim",
        entity_names=fed.entity_names, seed=SETTINGS["seed"],
    )  # fmt: skip
    sim = run_simulation(
        strategy, clients, num_rounds=ROUNDS, eval_every=EVAL_EVERY,
        seed=SETTINGS["seed"], progress=False,
    )  # fmt: skip
    out = tmp_path / "out"
    cfg = run_config(
        partition, "fede", out,
        **{"privacy.dp-epsilon": 4.0, "privacy.dp-clip": 0.5, **extra},
    )  # fmt: skip
    nodes = [
        {"partition-id": i, "alignment-secret": str(secret_file)} for i in range(3)
    ]
    _run(LocalGrid(client_app, nodes, cfg), cfg)
    doc = json.loads((out / "results.json").read_text())
    if not extra:  # the same noise, rows and metrics
        assert _curve(doc["history"]) == _curve(sim.history)
        assert doc["weighted"]["mrr"] == sim.test["mrr"]
    report = privacy_report(clients, settings)
    assert doc["privacy"]["dp"] == json.loads(json.dumps(report["dp"]))
    assert doc["privacy"]["dp"]["0"]["uploads"] == ROUNDS
    assert doc["privacy"]["dp"]["0"]["epsilon"] == pytest.approx(4.0, rel=1e-6)
