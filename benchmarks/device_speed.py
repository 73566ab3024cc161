r"""Seconds per federated KGE round and per validation pass on a device, with
the training samples drawn on the host or on the device (``--sample-on``).

Runs ``--rounds`` complete rounds of ``--algorithm`` (default FedE; TransE,
FedLU's settings unless given: dim 256, batch 1024, 256 shared negatives,
3 local epochs, both corruption modes) on a federated dataset with the
production loop (:func:`fedgraph.runtime.run_simulation`, in process), each
round followed by a full validation pass (head and tail filtered ranking of
every client's validation triples). A round's time runs from the server's
configuration to its aggregation; it and the validation's end with the
clients' replies read back on the host, so the device's queued work is
inside them. The first round also compiles kernels and starts the device:
it is reported on its own and left out of the means when more rounds ran.
Records the device's name, the settings, the threads, a GPU's peak allocated
memory and the load average at the start and at the end (a busy machine
slows every number).

Usage (a GPU)::

    fedgraph partition umls --strategy relation --clients 3 --out /tmp/umls-3
    python benchmarks/device_speed.py --data /tmp/umls-3 --device cuda \
        --sample-on device --rounds 5 --out runs/device_speed_umls3_device.json
    python benchmarks/device_speed.py --data /tmp/umls-3 --device cuda \
        --sample-on host --rounds 5 --out runs/device_speed_umls3_host.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from harness import load_average, machine, processor

from fedgraph.cli.choices import LOCAL_TRAINING, SAMPLE_ON


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="federated dataset (name or folder)")
    p.add_argument("--algorithm", default="fede", help="KGE algorithm (default: fede)")
    p.add_argument("--model", default="transe")
    p.add_argument("--device", default="cpu", help="e.g. cuda (default: cpu)")
    p.add_argument(
        "--sample-on",
        choices=SAMPLE_ON,
        default="host",
        help="host or device: where batches and negatives are drawn (default: host)",
    )
    p.add_argument("--rounds", type=int, default=3, help="rounds (default: 3)")
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument("--local-epochs", type=int, default=3)
    p.add_argument(
        "--per-positive-negatives",
        action="store_true",
        help="K negatives per positive (default: K shared by the batch)",
    )
    p.add_argument(
        "--local-training",
        choices=LOCAL_TRAINING,
        default="sequential",
        help="sequential or batched (run_simulation's local_training)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    p.add_argument("--out", type=Path, default=None, help="JSON file (default: stdout)")
    return p


def _device_name(device: str) -> str:
    import torch

    d = torch.device(device)
    if d.type == "cuda":
        return torch.cuda.get_device_name(d)
    return processor()


def _peak_memory(device: str) -> int | None:
    r"""The CUDA device's peak allocated bytes (:obj:`None` on a CPU)."""
    import torch

    if torch.device(device).type != "cuda":
        return None
    return int(torch.cuda.max_memory_allocated(device))


def _mean(values: list[float]) -> float | None:
    r"""The mean without the first round's (warm-up) value when there are
    later ones; :obj:`None` for none."""
    if not values:
        return None
    return statistics.fmean(values[1:] if len(values) > 1 else values)


def run(args: argparse.Namespace, argv: list[str]) -> dict[str, Any]:
    r"""Builds the federation, runs ``args.rounds`` rounds and returns the
    report."""
    import torch

    from fedgraph.data import load_dataset
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.registry import resolve_device
    from fedgraph.runtime import run_simulation

    resolve_device(args.device, "`--device`")
    if args.rounds < 1:
        raise ValueError(f"`--rounds` must be positive (got {args.rounds})")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    load_start = load_average()
    settings = KGESettings(
        model=args.model,
        dim=args.dim,
        batch_size=args.batch_size,
        num_negatives=args.num_negatives,
        local_epochs=args.local_epochs,
        shared_negatives=not args.per_positive_negatives,
        seed=args.seed,
        device=args.device,
        sample_on=args.sample_on,
    )
    fed = load_dataset(args.data)
    torch.manual_seed(args.seed)
    strategy, clients = build_kge_federation(args.algorithm, fed, settings)
    if torch.device(args.device).type == "cuda":
        torch.cuda.reset_peak_memory_stats(args.device)
    res = run_simulation(
        strategy,
        clients,
        num_rounds=args.rounds,
        eval_every=1,
        patience=0,
        seed=args.seed,
        progress=False,
        test=False,
        local_training=args.local_training,
    )
    rounds = [
        {
            "round": h["round"],
            "train_seconds": h["train_seconds"],
            "validation_seconds": h.get("eval_seconds"),
            "train_loss": h["train"].get("loss"),
            "valid_mrr": h.get("valid", {}).get("mrr"),
        }
        for h in res.history
    ]
    train = [r["train_seconds"] for r in rounds]
    valid = [r["validation_seconds"] for r in rounds if r["validation_seconds"]]
    return {
        "data": str(args.data),
        "algorithm": args.algorithm,
        "device": args.device,
        "device_name": _device_name(args.device),
        "sample_on": args.sample_on,
        "local_training": args.local_training,
        "settings": settings.to_dict(),
        "num_clients": fed.num_clients,
        **machine(),
        "command": "python benchmarks/device_speed.py " + " ".join(argv),
        "load_average_start": load_start,
        "rounds": rounds,
        "first_round_seconds": train[0],
        "seconds_per_round": _mean(train),
        "seconds_per_validation": _mean(valid),
        "rounds_in_means": max(1, len(train) - 1),
        "peak_device_memory_bytes": _peak_memory(args.device),
        "load_average_end": load_average(),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    try:
        report = run(args, argv)
    except ValueError as exc:
        print(f"device_speed.py: error: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        print(json.dumps(report, indent=1))
    else:
        from fedgraph.data.io import atomic_write_json

        args.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.out, report)
        print(f"seconds per round {report['seconds_per_round']:.3f}, per validation "
              f"{report['seconds_per_validation']:.3f}; {args.out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
