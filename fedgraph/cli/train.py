r"""``fedgraph train --data DATASET_OR_DIR --algorithm NAME --model NAME --out DIR``.

Federated algorithms run on :func:`fedgraph.runtime.run_simulation` with a
checkpoint in ``DIR/checkpoints`` after every round (``--resume`` continues a
killed run with identical numbers); ``DIR/progress.json`` holds the learning
curve so far and ``DIR/results.json`` the final results
(:func:`fedgraph.eval.write_results` format).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, NamedTuple

from fedgraph.cli.choices import (
    BASELINES,
    EVAL_PROTOCOLS,
    KGE_ALGORITHMS,
    KGE_LOSSES,
    KGE_MODELS,
    SELECTIONS,
    normalized,
)
from fedgraph.cli.options import count, fraction, non_negative, positive, real

#: ``--corrupt`` choice -> corruption modes of training
CORRUPTIONS = {"both": ("head-batch", "tail-batch"), "tail": ("tail-batch",)}


def _algorithms() -> list[str]:
    return list(KGE_ALGORITHMS) + list(BASELINES)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train a federated (or baseline) KGE model",
        description=(
            "Trains ALGORITHM on a federated KG (a registered dataset name such as "
            "fedlu-r3, or a folder of client0/ client1/ … triple folders) and "
            "writes results.json under --out. Defaults are FedLU's settings."
        ),
    )
    p.add_argument(
        "dataset",
        nargs="?",
        metavar="DATASET",
        help="federated dataset: a registered name (e.g. fedlu-r3) or a folder "
        "of client0/ client1/ … (`fedgraph partition` writes one)",
    )
    p.add_argument("--data", default=None, help="the same as DATASET (older spelling)")
    p.add_argument(
        "--root",
        type=Path,
        default=None,
        help="raw data root (default: $FEDGRAPH_DATA)",
    )
    p.add_argument(
        "--algorithm",
        required=True,
        help=f"one of {', '.join(_algorithms())}",
    )
    p.add_argument(
        "--model",
        type=normalized,
        choices=KGE_MODELS,
        default="transe",
        help="KGE model (default: transe)",
    )
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument(
        "--rounds",
        type=positive,
        default=200,
        help="max rounds (baselines: max epochs) (default: 200)",
    )
    p.add_argument(
        "--local-epochs",
        type=positive,
        default=3,
        help="epochs each client trains per round (default: 3)",
    )
    p.add_argument(
        "--batch-size",
        type=positive,
        default=1024,
        help="triples per batch (default: 1024)",
    )
    p.add_argument(
        "--num-negatives",
        type=positive,
        default=256,
        help="negatives per positive (default: 256)",
    )
    p.add_argument(
        "--dim", type=positive, default=256, help="embedding dimension (default: 256)"
    )
    p.add_argument(
        "--lr", type=real(0.0), default=1e-4, help="Adam learning rate (default: 1e-4)"
    )
    p.add_argument(
        "--gamma", type=float, default=9.0, help="score margin γ (default: 9.0)"
    )
    p.add_argument(
        "--fraction",
        type=fraction,
        default=1.0,
        help="client fraction F sampled per round, in (0, 1] (default: 1.0)",
    )
    p.add_argument(
        "--eval-every",
        type=positive,
        default=5,
        help="validate every k rounds (baselines: epochs) (default: 5)",
    )
    p.add_argument(
        "--patience",
        type=non_negative,
        default=3,
        help="validations without improvement before stopping; 0: never stop "
        "early (default: 3)",
    )
    p.add_argument(
        "--selection",
        choices=SELECTIONS,
        default="weighted",
        help="test every client at the best weighted validation round, or each "
        "at its own best one among the improving rounds (FedLU's code)",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument(
        "--proximal-mu",
        type=real(0.0, strict=False),
        default=0.1,
        help="FedProx μ (default: 0.1)",
    )
    p.add_argument(
        "--contrastive-mu",
        type=real(0.0, strict=False),
        default=0.3,
        help="FedEC μ_con (default: 0.3)",
    )
    p.add_argument(
        "--temperature", type=real(0.0), default=0.2, help="FedEC τ (default: 0.2)"
    )
    p.add_argument(
        "--evaluate-with",
        choices=("local", "global"),
        default=None,
        help="score clients' own tables (FedLU) or the global rows (FedE) "
        "(default: the --protocol's choice)",
    )
    p.add_argument(
        "--protocol",
        default="fedlu",
        help="evaluation protocol, one of "
        f"{list(EVAL_PROTOCOLS)} (fedgraph.eval.protocol): fedlu = head and tail "
        "among the client's entities, each client's own table; fede = tails among "
        "the client's training entities, the server's rows (default: fedlu)",
    )
    p.add_argument(
        "--corrupt",
        choices=CORRUPTIONS,
        default="both",
        help="corrupted side of training negatives: both (one step per side and "
        "batch) or tail (FedE's code) (default: both)",
    )
    p.add_argument(
        "--no-subsampling",
        action="store_true",
        help="no RotatE frequency weights on the loss (FedE's code has none)",
    )
    p.add_argument(
        "--loss",
        choices=KGE_LOSSES,
        default="sigmoid-ns",
        help="KGE loss (default: sigmoid-ns)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an algorithm's own setting (KGESettings.extra; repeatable): "
        "fedlu: mu_distill (2.0), distill_schedule (always | gated), "
        "distill_wait (20), distill_tol (0.001), local_init (global | own), "
        "global_relations (shared | own: an ablation); "
        "feds: p (0.4), "
        "sync_interval (4); fedprox: proximal_reduction (sum | entity-mean)",
    )
    p.add_argument(
        "--per-positive-negatives",
        action="store_true",
        help="draw --num-negatives negatives for every positive, as FedLU's and "
        "FedS's code (default: one set shared by the batch, much faster on a CPU)",
    )
    p.add_argument(
        "--unseen",
        choices=("keep", "drop"),
        default="keep",
        help="evaluation triples whose entity or relation is absent from the "
        "client's training triples: keep them (scored with an untrained "
        "embedding; a warning gives their count) or drop them (default: keep)",
    )
    p.add_argument(
        "--device",
        default="cpu",
        help="where clients train and rank, e.g. cuda (default: cpu); the samples "
        "are drawn on the CPU, so a run may resume on another device",
    )
    p.add_argument(
        "--threads", type=count, default=0, help="torch threads (0: default)"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out (refused if a setting that changes the "
        "result differs from the recorded one)",
    )
    p.add_argument(
        "--stop-after",
        type=positive,
        default=None,
        help="return after this many rounds of this call (resume later)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def dataset_argument(args: argparse.Namespace) -> str:
    r"""The dataset of ``fedgraph train``: ``DATASET`` or ``--data``."""
    if args.dataset and args.data and args.dataset != args.data:
        raise ValueError(
            f"DATASET {args.dataset!r} and `--data` {args.data!r} differ: give one"
        )
    data = args.dataset or args.data
    if not data:
        raise ValueError("give the dataset: `fedgraph train DATASET --algorithm …`")
    return str(data)


def _parse_set(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"`--set` expects KEY=VALUE (got {item!r})")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _load_federation(data: str, root: Path | None = None) -> Any:
    from fedgraph.data import load_dataset
    from fedgraph.partition.shard import FederatedKG

    fed = load_dataset(Path(data) if Path(data).is_dir() else data, root=root)
    if not isinstance(fed, FederatedKG):
        raise ValueError(
            f"DATASET {data!r} is not a federated dataset (it is a "
            f"{type(fed).__name__}): make one with `fedgraph partition {data} "
            "--strategy relation --clients 3 --out DIR`, then `fedgraph train DIR …`"
        )
    return fed


def configure_clients(
    clients: dict[int, Any],
    protocol: Any,
    modes: tuple[str, ...] = CORRUPTIONS["both"],
    *,
    subsampling: bool = True,
) -> None:
    r"""Sets every client's evaluation ``protocol``
    (:class:`~fedgraph.eval.protocol.EvalProtocol`), training corruption
    ``modes`` and, with ``subsampling=False``, drops its frequency weights."""
    for client in clients.values():
        client.use_protocol(protocol)
        client.modes = tuple(modes)
        if not subsampling:
            client.weights = None


class TrainedRun(NamedTuple):
    r"""A ``fedgraph train`` run rebuilt by :func:`load_trained_run`."""

    meta: dict[str, Any]  #: the run's recorded settings (``progress.json``)
    settings: Any  #: its :class:`~fedgraph.federated.kge_setup.KGESettings`
    fed: Any  #: the federated dataset
    strategy: Any
    clients: dict[int, Any]
    which_round: str  #: e.g. ``"round 60 (best valid)"``


def load_trained_run(
    run_dir: Path,
    which: str = "best",
    *,
    data: str | None = None,
    algorithms: tuple[str, ...] | None = None,
    device: str = "cpu",
) -> TrainedRun:
    r"""A ``fedgraph train`` run rebuilt from its folder, the strategy and
    clients holding the ``which`` checkpoint (``"best"``: the best validation
    round, the one the run tested; ``"last"``). ``data`` replaces the dataset
    the run recorded (a moved folder); ``algorithms`` limits the runs
    accepted; the clients are rebuilt on ``device`` whatever device the run
    trained on."""
    from fedgraph.data.checkpoint import CheckpointError, load_checkpoint
    from fedgraph.federated.kge_setup import KGESettings, build_kge_federation

    meta_file = run_dir / "progress.json"
    if not meta_file.is_file():
        raise FileNotFoundError(
            f"{meta_file} not found: is `{run_dir}` a `fedgraph train` run?"
        )
    progress = json.loads(meta_file.read_text())
    meta = progress["settings"]
    algorithm = meta.get("algorithm")
    if algorithms is not None and algorithm not in algorithms:
        raise ValueError(
            f"`{run_dir}` is a {algorithm!r} run, not one of {list(algorithms)}"
        )
    ckpt = run_dir / "checkpoints" / f"{which}.pt"
    if not ckpt.is_file():
        raise FileNotFoundError(
            f"{ckpt} not found (run longer, or pass --checkpoint last)"
        )
    state = load_checkpoint(ckpt, keys=("models",) if which == "last" else ())
    if which == "last":
        which_round = f"round {state['round']} (last)"
        state = state["models"]
    else:
        evald = [h for h in progress.get("history", []) if "valid" in h]
        top = max(evald, key=lambda h: h["valid"]["mrr"]) if evald else {"round": "?"}
        which_round = f"round {top['round']} (best valid)"
    keys = KGESettings.__dataclass_fields__
    settings = KGESettings(
        **{**{k: meta[k] for k in keys if k in meta}, "device": device}
    )
    fed = _load_federation(meta["data"] if data is None else data)
    strategy, clients = build_kge_federation(algorithm, fed, settings)
    recorded = meta.get("protocol", {})
    if "name" in recorded:  # a run recording no protocol name ran FedLU's
        configure_clients(
            clients,
            recorded["name"],
            CORRUPTIONS[meta.get("corrupt", "both")],
            subsampling=meta.get("subsampling", True),
        )
    try:
        strategy.load_state_dict(state["strategy"])
        for c, cl in clients.items():
            cl.load_state_dict(state["clients"][c])
    except (RuntimeError, KeyError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise CheckpointError(
            f"checkpoint {ckpt} does not fit the run's models on this dataset "
            f"({first}); is `--data` the partition the run trained on?"
        ) from None
    return TrainedRun(meta, settings, fed, strategy, clients, which_round)


def _is_run(out: Path) -> bool:
    r"""Whether ``out`` holds what ``fedgraph train`` writes."""
    return (
        (out / "progress.json").is_file()
        or (out / "checkpoints").is_dir()
        or any(out.glob("trainer*.pt"))
    )


def run(args: argparse.Namespace) -> int:
    import torch

    from fedgraph.data.io import atomic_write_json
    from fedgraph.eval.unseen import check_unseen
    from fedgraph.federated.kge_setup import (
        KGESettings,
        algorithm_settings,
        build_kge_federation,
        check_extra,
        extra_settings,
    )
    from fedgraph.registry import resolve_device
    from fedgraph.runtime import run_simulation
    from fedgraph.runtime.run_record import check_resume

    args.data = dataset_argument(args)
    algorithm = normalized(args.algorithm)
    if algorithm not in _algorithms():
        raise ValueError(
            f"Could not resolve '{args.algorithm}' among choices {_algorithms()}"
        )
    resolve_device(args.device, "`--device`")
    from fedgraph.eval.protocol import resolve_protocol

    try:
        protocol = resolve_protocol(args.protocol)
    except ValueError as exc:
        raise ValueError(f"`--protocol`: {exc}") from None
    evaluate_with = args.evaluate_with or protocol.model_scored
    modes = CORRUPTIONS[args.corrupt]
    if args.selection != "weighted" and algorithm in BASELINES:
        raise ValueError(
            f"`--selection {args.selection}` applies to federated algorithms; "
            f"{algorithm} trains each model with its own early stopping"
        )
    if args.selection != "weighted" and evaluate_with != "local":
        raise ValueError(
            f"`--selection {args.selection}` needs `--evaluate-with local` (each "
            "client tested on its own tables of its own best round)"
        )
    extra = _parse_set(args.set)
    try:  # before anything is written: a mistyped key is not silently ignored
        check_extra(extra, algorithm)
        if algorithm in extra_settings:  # and values of the right type
            algorithm_settings(algorithm, extra)
    except ValueError as exc:
        raise ValueError(f"`--set`: {exc}") from None
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise ValueError(f"`--out` {out} is a file, not a folder")
    if out.exists() and any(out.iterdir()) and not args.resume:
        raise ValueError(f"`--out` {out} is not empty: pass --resume to continue it")
    if args.resume and out.exists() and any(out.iterdir()) and not _is_run(out):
        raise ValueError(
            f"`--out` {out} is not a `fedgraph train` run (no progress.json, "
            "checkpoints/ or trainer*.pt): nothing to resume; pick another `--out`"
        )
    command = args.command_line
    settings = KGESettings(
        model=args.model,
        dim=args.dim,
        gamma=args.gamma,
        lr=args.lr,
        batch_size=args.batch_size,
        num_negatives=args.num_negatives,
        local_epochs=args.local_epochs,
        seed=args.seed,
        proximal_mu=args.proximal_mu,
        contrastive_mu=args.contrastive_mu,
        temperature=args.temperature,
        evaluate_with=evaluate_with,
        loss=args.loss,
        shared_negatives=not args.per_positive_negatives,
        extra=extra,
        device=args.device,
    )
    # what changes the result: a resumed run must have been trained with it
    given = {
        "algorithm": algorithm,
        "data": str(args.data),
        **settings.to_dict(),
        "unseen": args.unseen,
        "fraction": args.fraction,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "selection": args.selection,
        # the evaluation protocol and the training corruption change the result
        "eval_protocol": protocol.name,
        "corrupt": args.corrupt,
        "subsampling": not args.no_subsampling,
    }
    if args.resume:
        check_resume(out, given)
    finished = out / "results.json"
    if args.resume and finished.exists() and algorithm not in BASELINES:
        # a finished run: its best round was tested and its results written;
        # resuming it would only repeat the test pass
        done = json.loads(finished.read_text())
        ran = done.get("settings", {}).get("algorithm")
        if ran != algorithm:
            raise ValueError(
                f"`--out` {out} holds a finished {ran!r} run, not {algorithm!r}"
            )
        print(
            f"{algorithm} run in {out} already finished at round {done['rounds']} "
            f"(best round {done.get('best_round')}): test mrr "
            f"{done['weighted']['mrr']:.4f}; {finished} left as written"
        )
        return 0
    progress_path = out / "progress.json"
    t0 = time.perf_counter()
    fed = check_unseen(
        _load_federation(args.data, args.root), drop=args.unseen == "drop"
    )
    given["num_clients"] = fed.num_clients
    if args.resume:  # the same folder may hold another federation now
        check_resume(out, given)
    if algorithm in BASELINES:  # the KGE core's trainer, same results format
        from fedgraph.runtime.baselines import run_baseline

        if not progress_path.exists():  # the record ``--resume`` compares with
            record = {**given, "command": command, "rounds_max": args.rounds}
            atomic_write_json(progress_path, {"settings": record, "history": []})

        res = run_baseline(
            fed,
            setting=algorithm,
            model=args.model,
            hidden_channels=args.dim,
            gamma=args.gamma,
            out=out,
            command=command,
            protocol=protocol,
            loss=args.loss,
            modes=modes,
            subsampling=not args.no_subsampling,
            lr=args.lr,
            batch_size=args.batch_size,
            num_negatives=args.num_negatives,
            eval_every=args.eval_every,
            patience=args.patience,
            max_epochs=args.rounds,
            seed=args.seed,
            progress=not args.quiet,
            shared_negatives=not args.per_positive_negatives,
            device=args.device,
        )
        w = res["weighted"]
        print(
            f"{algorithm} on {args.data}: test mrr {w['mrr']:.4f}; results in {res['path']}"
        )
        return 0

    strategy, clients = build_kge_federation(algorithm, fed, settings)
    configure_clients(clients, protocol, modes, subsampling=not args.no_subsampling)
    setup_seconds = time.perf_counter() - t0
    meta = {
        "algorithm": algorithm,
        "data": str(args.data),
        "num_clients": fed.num_clients,
        "command": command,
        "strategy": repr(strategy),
        # the same, structured (what the strategy was built with)
        "strategy_params": strategy.get_params(),
        **settings.to_dict(),
        "unseen": args.unseen,
        "rounds_max": args.rounds,
        "fraction": args.fraction,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "selection": args.selection,
        "protocol": {**protocol.to_dict(), "model_scored": evaluate_with},
        "eval_protocol": protocol.name,
        "corrupt": args.corrupt,
        "subsampling": not args.no_subsampling,
        "threads": torch.get_num_threads(),
        "setup_seconds": setup_seconds,
    }
    history: list[dict[str, Any]] = []
    if args.resume and progress_path.exists():
        history = json.loads(progress_path.read_text()).get("history", [])
    if not progress_path.exists():  # the record ``--resume`` compares with
        atomic_write_json(progress_path, {"settings": meta, "history": []})

    def on_round(entry: dict[str, Any]) -> None:
        # a resumed run may repeat rounds after the last checkpoint: keep one each
        history[:] = [h for h in history if h["round"] < entry["round"]] + [entry]
        atomic_write_json(
            progress_path, {"settings": meta, "history": history}, default=float
        )
        if args.quiet:
            line = f"round {entry['round']}: {entry['train_seconds']:.0f}s train"
            if "valid" in entry:
                v = entry["valid"]
                line += (
                    f", valid mrr {v.get('mrr', float('nan')):.4f} hits@10 "
                    f"{v.get('hits@10', float('nan')):.4f} "
                    f"({entry['eval_seconds']:.0f}s eval)"
                )
            print(line, flush=True)

    t1 = time.perf_counter()
    res = run_simulation(
        strategy,
        clients,
        num_rounds=args.rounds,
        fraction=args.fraction,
        eval_every=args.eval_every,
        patience=args.patience,
        seed=args.seed,
        checkpoint_dir=out / "checkpoints",
        resume=args.resume,
        progress=not args.quiet,
        stop_after=args.stop_after,
        on_round=on_round,
        selection=args.selection,
    )
    meta["wall_seconds_this_call"] = time.perf_counter() - t1
    if not res.test:
        print(f"stopped after round {res.rounds}; continue with --resume", flush=True)
        return 0
    path = res.write_results(out / "results.json", settings=meta)
    w = res.test
    print(
        f"{algorithm} on {args.data}: test mrr {w['mrr']:.4f} hits@1 {w['hits@1']:.4f} "
        f"hits@3 {w['hits@3']:.4f} hits@10 {w['hits@10']:.4f} (best round "
        f"{res.best_round}/{res.rounds}); results in {path}"
    )
    return 0
