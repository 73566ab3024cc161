r"""Training seconds and traffic per round of FedE in the Flower apps of
:mod:`fedgraph.privacy.flower` with each defence, back to back in one
process over :class:`~fedgraph.runtime.flower.LocalGrid` (every message
taken apart into Flower's wire objects; no network, no SuperLink), one
thread: what the defences' protocols add to a deployment's round.

Usage: python benchmarks/privacy_flower_overhead.py PARTITION_DIR [ROUNDS]
(e.g. ``fedgraph partition umls --strategy relation --clients 3 --out DIR``).
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
from pathlib import Path

import torch

from fedgraph.privacy.flower import client_app, server_app
from fedgraph.runtime.flower import LocalGrid

SETTINGS = {
    "fede": {},
    "secagg": {"privacy.secagg": True},
    "secagg+recovery": {"privacy.secagg": True, "privacy.secagg-threshold": 2},
    "alignment": {"privacy.private-alignment": True},
}


def run(data: str, rounds: int, extra: dict, work: Path) -> dict:
    from flwr.app import Context, RecordDict

    num = len(json.loads((Path(data) / "META.json").read_text())["clients"])
    secret = work / "secret.key"
    secret.write_text(secrets.token_hex(32))
    cfg = {
        "data": data, "algorithm": "fede", "num-rounds": rounds, "dim": 128,
        "lr": 0.001, "eval-every": rounds, "patience": 0, "test": False,
        "out": str(work / "out"), "threads": 1, "accept-failures": True, **extra,
    }  # fmt: skip
    nodes = [{"partition-id": i, "alignment-secret": str(secret)} for i in range(num)]
    grid = LocalGrid(client_app, nodes, cfg)
    context = Context(
        run_id=grid.run.run_id, node_id=0, node_config={}, state=RecordDict(),
        run_config=dict(cfg),
    )  # fmt: skip
    server_app(grid, context)
    doc = json.loads((work / "out" / "results.json").read_text())
    later = doc["history"][1:]  # round 1 pays one-off costs (imports, keys)
    per = {int(r): c for r, c in doc["comm_per_round"].items() if int(r) > 1}
    return {
        "seconds": sum(h["train_seconds"] for h in later) / len(later),
        "mb_up": sum(c["bytes_up"] for c in per.values()) / len(per) / 1e6,
        "mb_down": sum(c["bytes_down"] for c in per.values()) / len(per) / 1e6,
        "wire_mb": (grid.wire_bytes["up"] + grid.wire_bytes["down"]) / rounds / 1e6,
    }


def main(data: str, rounds: int = 5) -> None:
    torch.set_num_threads(1)
    for rep in range(2):
        for name, extra in SETTINGS.items():
            r = run(data, rounds, extra, Path(tempfile.mkdtemp()))
            print(
                f"pass {rep} {name}: {r['seconds']:.3f} s per training round, "
                f"ledger {r['mb_up']:.3f} MB up / {r['mb_down']:.3f} MB down per "
                f"round, {r['wire_mb']:.3f} MB of Flower messages per round"
            )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
