r"""One client of a ``benchmarks/fede_claims.sh`` Single run, trained again
with one setting changed, to measure what that setting does to the
validation curve: FedE's negatives (``per-positive``: 256 drawn for every
positive, as FedE's code, instead of 256 shared by the batch).

The client is built exactly as ``fedgraph train --algorithm independent``
builds client ``--client`` (the same initialisation seed, the same
generator seed, FedE's settings as in ``benchmarks/fede_claims.sh``), so
with no change (``--variant series``) it repeats that run's validation
curve and training losses bit for bit, which the script checks against the run folder when
``--series`` is given.

    python benchmarks/fede_single_ab.py runs/fede/data/fb15k-237-fed3 --client 2 \
        --variant per-positive --epochs 100 --series runs/fede/fb15k237-fed3-rotate-single \
        --out docs/results/fede-single-ab-fb15k237-fed3-rotate-c2-per-positive.json

Every validation is checkpointed under ``--work`` (default
``runs/fede-ab/``), so an interrupted call resumes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import torch

#: the changes this script can make to the Single run's settings
VARIANTS: dict[str, dict[str, Any]] = {
    "series": {},
    "per-positive": {"shared_negatives": False},
}

#: FedE's settings as ``benchmarks/fede_claims.sh`` passes them
SETTINGS: dict[str, Any] = {
    "model": "rotate",
    "dim": 256,
    "gamma": 10.0,
    "loss": "nssa",
    "lr": 1e-3,
    "batch_size": 512,
    "num_negatives": 256,
    "shared_negatives": True,
    "subsampling": False,
    "modes": ("tail-batch",),
    "protocol": "fede",
    "seed": 0,
}


def train_client(
    data: str, client: int, variant: str, epochs: int, eval_every: int, work: Path
) -> dict[str, Any]:
    r"""Client ``client`` of the Single run, ``variant`` applied, trained for
    ``epochs`` epochs; its validation history, the test metrics of its best
    validation's model (the run's protocol) and seconds per epoch."""
    from fedgraph.eval.protocol import resolve_protocol
    from fedgraph.runtime.baselines import build_trainer
    from fedgraph.runtime.trained import load_kge_federation

    s = {**SETTINGS, **VARIANTS[variant]}
    fed = load_kge_federation(data)
    shards = list(fed)
    if not 0 <= client < len(shards):
        raise ValueError(
            f"`--client` {client} is not a client of {data} (0..{len(shards) - 1})"
        )
    work.mkdir(parents=True, exist_ok=True)
    # built as fedgraph.runtime.baselines builds client `client` of the run
    tr = build_trainer(
        shards[client].graph,
        client,
        (s["model"], s["dim"], s["gamma"], {}),
        resolve_protocol(s["protocol"]),
        loss=s["loss"],
        lr=s["lr"],
        batch_size=s["batch_size"],
        num_negatives=s["num_negatives"],
        shared_negatives=s["shared_negatives"],
        subsampling=s["subsampling"],
        eval_every=eval_every,
        patience=10**6,
        max_epochs=epochs,
        modes=s["modes"],
        seed=s["seed"],
        checkpoint=work / f"client{client}-{variant}.pt",
    )
    info = tr.fit()  # leaves the best validation's model loaded
    return {
        "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in s.items()},
        "valid": _curve(info["history"]),
        "best_epoch": tr.best_epoch,
        "test_at_best": tr.evaluate("test").compute(),
        "seconds_per_epoch": tr.train_seconds / max(1, info["epochs"]),
    }


def _curve(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    r"""``{"epoch", "mrr", "loss"}`` of each validation in a trainer history."""
    return [
        {"epoch": h["epoch"], "mrr": h["valid"]["mrr"], "loss": h["loss"]}
        for h in history
        if "valid" in h
    ]


def series_curve(run: Path, client: int) -> list[dict[str, Any]]:
    r"""The validation curve of client ``client`` in a Single run folder."""
    from fedgraph.data.checkpoint import load_checkpoint

    state = load_checkpoint(run / f"trainer{client}.pt", keys=("history",))
    return _curve(state["history"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="the partition folder of the Single run")
    ap.add_argument("--client", type=int, required=True)
    ap.add_argument("--variant", choices=sorted(VARIANTS), required=True)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument(
        "--series",
        type=Path,
        default=None,
        help="the Single run folder, to compare with",
    )
    ap.add_argument("--work", type=Path, default=Path("runs/fede-ab"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="JSON file to write")
    a = ap.parse_args(argv)
    if a.epochs < 1 or a.eval_every < 1:
        ap.error("--epochs and --eval-every must be at least 1")
    if a.series is not None and not (a.series / f"trainer{a.client}.pt").is_file():
        print(
            f"error: {a.series / f'trainer{a.client}.pt'} not found (--series: a Single run folder)",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(a.threads)
    t0 = time.perf_counter()
    try:
        res = train_client(a.data, a.client, a.variant, a.epochs, a.eval_every, a.work)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out: dict[str, Any] = {
        "data": a.data,
        "client": a.client,
        "variant": a.variant,
        **res,
    }
    if a.series is not None:
        series = {h["epoch"]: h for h in series_curve(a.series, a.client)}
        out["series"] = [
            series[h["epoch"]] for h in res["valid"] if h["epoch"] in series
        ]
        if a.variant == "series":
            same = all(
                (series[h["epoch"]]["mrr"], series[h["epoch"]]["loss"])
                == (h["mrr"], h["loss"])
                for h in res["valid"]
                if h["epoch"] in series
            )
            out["repeats_the_series"] = same
    out["command"] = "python benchmarks/fede_single_ab.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    out["wall_seconds"] = time.perf_counter() - t0
    for h in res["valid"]:
        ref = next(
            (x["mrr"] for x in out.get("series", []) if x["epoch"] == h["epoch"]), None
        )
        line = f"epoch {h['epoch']}: valid MRR {100 * h['mrr']:.2f}"
        print(line + ("" if ref is None else f" (series {100 * ref:.2f})"))
    test = res["test_at_best"]
    print(f"best epoch {res['best_epoch']}: test MRR {100 * test['mrr']:.2f}")
    if a.out is not None:
        from fedgraph.data.io import atomic_write_json

        atomic_write_json(a.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
