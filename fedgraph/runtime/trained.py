r"""A finished or checkpointed ``fedgraph train`` run, rebuilt from its
folder (:func:`load_trained_run`): what ``fedgraph fuse`` and ``fedgraph
unlearn`` start from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple


def load_kge_federation(data: str | Path, root: Path | None = None) -> Any:
    r"""The federated KG named or stored at ``data`` (a registered dataset
    name or a partition folder; raw files under ``root``), or a
    :class:`ValueError` naming it."""
    from fedgraph.data import load_dataset
    from fedgraph.data.shard import FederatedKG

    fed = load_dataset(Path(data) if Path(data).is_dir() else str(data), root=root)
    if not isinstance(fed, FederatedKG):
        raise ValueError(
            f"DATASET {str(data)!r} is not a federated dataset (it is a "
            f"{type(fed).__name__}): make one with `fedgraph partition {data} "
            "--strategy relation --clients 3 --out DIR`, then `fedgraph train DIR …`"
        )
    return fed


class TrainedRun(NamedTuple):
    r"""A ``fedgraph train`` run rebuilt by :func:`load_trained_run`."""

    meta: dict[str, Any]  #: the run's recorded settings (``progress.json``)
    settings: Any  #: its :class:`~fedgraph.federated.kge.setup.KGESettings`
    fed: Any  #: the federated dataset
    strategy: Any
    clients: dict[int, Any]
    which_round: str  #: e.g. ``"round 60 (best valid)"``


def _use_recorded_protocol(clients: dict[int, Any], meta: dict[str, Any]) -> None:
    r"""Sets the evaluation protocol and training corruption the run recorded
    on every client (a run recording no protocol name ran FedLU's: the
    clients' default)."""
    from fedgraph.models.kge import MODES

    recorded = meta.get("protocol", {})
    if "name" in recorded:  # a run recording no protocol name ran FedLU's
        corrupt = meta.get("corrupt", "both")
        for client in clients.values():
            client.use_protocol(recorded["name"])
            client.modes = ("tail-batch",) if corrupt == "tail" else MODES
            if not meta.get("subsampling", True):
                client.weights = None


#: the checkpoints of a run that can be loaded: its best validation round
#: (the one it tested) and its last round (``--checkpoint`` of ``fedgraph
#: fuse`` and ``fedgraph unlearn``)
CHECKPOINTS = ("best", "last")


def _progress(run_dir: Path, algorithms: tuple[str, ...] | None) -> dict[str, Any]:
    r"""The run's ``progress.json``, of one of ``algorithms`` when given."""
    meta_file = run_dir / "progress.json"
    if not meta_file.is_file():
        raise FileNotFoundError(
            f"{meta_file} not found: is `{run_dir}` a `fedgraph train` run?"
        )
    progress = json.loads(meta_file.read_text())
    algorithm = progress["settings"].get("algorithm")
    if algorithms is not None and algorithm not in algorithms:
        raise ValueError(
            f"`{run_dir}` is a {algorithm!r} run, not one of {list(algorithms)}"
        )
    return progress


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
    trained on, drawing their samples on the host (what follows, fusion or
    unlearning, draws there; the state of a ``sample_on="device"`` run's
    device generators is not loaded)."""
    from fedgraph.data.checkpoint import CheckpointError, load_checkpoint
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation

    if which not in CHECKPOINTS:
        raise ValueError(f"`which` must be one of {CHECKPOINTS} (got {which!r})")
    progress = _progress(run_dir, algorithms)
    meta = progress["settings"]
    algorithm = meta.get("algorithm")
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
        **{
            **{k: meta[k] for k in keys if k in meta},
            "device": device,
            "sample_on": "host",
        }
    )
    fed = load_kge_federation(meta["data"] if data is None else data)
    strategy, clients = build_kge_federation(algorithm, fed, settings)
    _use_recorded_protocol(clients, meta)
    try:
        strategy.load_state_dict(state["strategy"])
        for c, cl in clients.items():
            own = state["clients"][c]
            cl.load_state_dict({k: own[k] for k in own if k != "sample_generator"})
    except (RuntimeError, KeyError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise CheckpointError(
            f"checkpoint {ckpt} does not fit the run's models on this dataset "
            f"({first}); is `--data` the partition the run trained on?"
        ) from None
    return TrainedRun(meta, settings, fed, strategy, clients, which_round)


__all__ = ["CHECKPOINTS", "TrainedRun", "load_trained_run", "load_kge_federation"]
