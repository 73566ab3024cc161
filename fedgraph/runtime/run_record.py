r"""What a training run is, and the check that a resumed run continues the
run it claims to.

A run records its settings in ``progress.json`` (``{"settings": {...},
"history": [...]}``, from the moment it starts) and in every checkpoint it
writes (``checkpoints/last.pt``, ``checkpoints/best.pt``, ``trainer*.pt``:
their ``"settings"``). Besides the options, the record holds the run's
identity (:func:`run_identity`): ``run_id``, drawn when the run starts, and
``data_sha256``, a fingerprint of the data files it reads
(:func:`data_fingerprint`).

``--resume`` (:func:`check_resume`) compares the command with every record
and refuses, with one line: a setting that changes the result (algorithm,
data, its fingerprint, model, dimension, learning rate, seed, negatives, …;
only :data:`FREE_KEYS` may differ), a checkpoint without a record, a
checkpoint of another run (another ``run_id``), a run whose trained rounds
are recorded but whose checkpoints are gone, and a ``--rounds`` that a
finished run cannot honour (:func:`check_rounds`).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

#: recorded keys a resumed run may change: how fast or where it runs, what it
#: prints, how far it goes, and what is measured rather than chosen
FREE_KEYS = frozenset(
    {
        "device",
        "threads",
        "quiet",
        "rounds_max",
        "stop_after",
        "command",
        "setup_seconds",
        "wall_seconds_this_call",
        # derived from the other settings (and may name the device)
        "strategy",
        "strategy_params",
        "protocol",
        # the run's identity, checked on its own (:func:`check_resume`)
        "run_id",
    }
)

#: keys a record must hold once the command gives them (a record without
#: them cannot be checked against the command)
REQUIRED_KEYS = ("data_sha256",)

PROGRESS, RESULTS = "progress.json", "results.json"
LAST = Path("checkpoints") / "last.pt"


def same_data(a: Any, b: Any) -> bool:
    r"""Whether two ``data`` settings name the same dataset: equal names
    (ignoring case, ``-`` and ``_``) or names of one registered dataset, or
    folders resolving to the same path."""
    if a == b:
        return True
    pa, pb = Path(str(a)).expanduser(), Path(str(b)).expanduser()
    if pa.exists() or pb.exists():
        try:
            return pa.resolve() == pb.resolve()
        except OSError:  # pragma: no cover - unreadable paths differ
            return False

    def norm(x: Any) -> str:
        return str(x).lower().replace("-", "").replace("_", "")

    if norm(a) == norm(b):
        return True
    try:  # two names of one registered dataset (an alias)
        from fedgraph.data.load import resolve_dataset

        return resolve_dataset(str(a)) is resolve_dataset(str(b))
    except (ValueError, KeyError):
        return False


def data_fingerprint(
    data: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> str:
    r"""``"sha256:…"`` over the files a run reads from ``data``: every file
    under a folder (a partition, a dataset layout; hidden files aside), or
    the raw files of a registered dataset under the data ``root`` (default:
    ``FEDGRAPH_DATA``). Each file adds its relative path and its own
    SHA-256, so an edit, a rename, an added or a removed file changes it.

    Raises:
        ValueError: ``data`` is neither a folder nor a registered name.
        FileNotFoundError: a raw file of the registered dataset is absent.
    """
    from fedgraph.data.io import sha256_file

    h = hashlib.sha256()
    for rel, path in _data_files(data, root):
        h.update(f"\0{rel}\0{sha256_file(path)}".encode())
    return "sha256:" + h.hexdigest()


def _data_files(
    data: str | os.PathLike[str], root: str | os.PathLike[str] | None
) -> list[tuple[str, Path]]:
    r"""(relative name, path) of each file :func:`data_fingerprint` reads."""
    folder = Path(str(data)).expanduser()
    if folder.is_dir():
        files = []
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if path.is_file() and not any(p.startswith(".") for p in rel.parts):
                files.append((rel.as_posix(), path))
        return files
    from fedgraph.data.load import resolve_dataset
    from fedgraph.data.root import get_data_root

    cls = resolve_dataset(str(data))
    probe = cls.__new__(cls)  # the raw file list, without loading (as is_present)
    probe.root = get_data_root(root)
    return list(zip(probe.raw_file_names, probe.raw_paths, strict=True))


def run_identity(
    run_dir: str | os.PathLike[str],
    data: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    r"""``{"run_id", "data_sha256"}`` of the run in ``run_dir``: the
    ``run_id`` it records (``progress.json``, else a checkpoint) or a new
    one, and the fingerprint of ``data`` (:func:`data_fingerprint`)."""
    run_dir = Path(run_dir)
    ids = [r.get("run_id") for _, r in _records(run_dir)]
    known = next((i for i in ids if isinstance(i, str)), None)
    return {
        "run_id": known or uuid.uuid4().hex,
        "data_sha256": data_fingerprint(data, root),
    }


def differing_settings(
    recorded: Mapping[str, Any],
    given: Mapping[str, Any],
    free: Collection[str] = FREE_KEYS,
) -> list[str]:
    r"""The keys (sorted) whose values differ between the ``recorded``
    settings of a run and the ``given`` ones, ignoring ``free`` (default:
    :data:`FREE_KEYS`) and keys only one side has (settings added since the
    run was written), except :data:`REQUIRED_KEYS`, which differ when
    ``given`` has them and ``recorded`` does not."""
    out = []
    for key in sorted(set(recorded) & set(given) - set(free)):
        a, b = recorded[key], given[key]
        if key == "data":
            if not same_data(a, b):
                out.append(key)
        elif _plain(a) != _plain(b):
            out.append(key)
    missing = [k for k in REQUIRED_KEYS if k in given and k not in recorded]
    return sorted(out + missing)


def _plain(x: Any) -> Any:
    # the recorded side went through JSON: tuples are lists, keys strings
    return json.loads(json.dumps(x, default=str, sort_keys=True))


def _progress(run_dir: Path) -> dict[str, Any] | None:
    r"""``run_dir/progress.json`` (:obj:`None` if absent).

    Raises:
        ValueError: if it is not readable JSON or records no settings.
    """
    path = run_dir / PROGRESS
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc}); restore it from a copy, or train "
            "into a new folder"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("settings"), dict):
        raise ValueError(
            f"{path} records no run settings (it was not written by `fedgraph "
            "train`); restore it from a copy, or train into a new folder"
        )
    return doc


def recorded_settings(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    r"""The settings a run folder records in ``progress.json`` (:obj:`None`
    if it has none yet).

    Raises:
        ValueError: if ``progress.json`` is not readable JSON or records no
            settings.
    """
    doc = _progress(Path(run_dir))
    return None if doc is None else dict(doc["settings"])


def checkpoint_files(run_dir: str | os.PathLike[str]) -> list[Path]:
    r"""The checkpoints a run folder holds: ``checkpoints/last.pt`` and
    ``checkpoints/best.pt`` (federated runs), ``trainer*.pt`` (baselines)."""
    run_dir = Path(run_dir)
    found = [run_dir / LAST, run_dir / "checkpoints" / "best.pt"]
    return [p for p in found if p.is_file()] + sorted(run_dir.glob("trainer*.pt"))


def _load(path: Path, run_dir: Path) -> dict[str, Any]:
    r"""A checkpoint of ``run_dir``, memory-mapped (its tensors are not read)."""
    from fedgraph.data.checkpoint import CheckpointError, load_checkpoint

    hint = f"restore it from a copy, or delete {run_dir} and train again"
    obj = load_checkpoint(path, hint=hint, mmap=True)
    if not isinstance(obj, dict):
        raise CheckpointError(f"checkpoint {path} is not a run's checkpoint; {hint}")
    return obj


def _records(run_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    r"""(file, settings) of ``progress.json`` and of each checkpoint that
    records settings."""
    doc = _progress(run_dir)
    out = [] if doc is None else [(run_dir / PROGRESS, dict(doc["settings"]))]
    for path in checkpoint_files(run_dir):
        settings = _load(path, run_dir).get("settings")
        if isinstance(settings, dict):
            out.append((path, settings))
    return out


def check_resume(
    run_dir: str | os.PathLike[str],
    given: Mapping[str, Any],
    rounds: int | None = None,
) -> dict[str, Any] | None:
    r"""Refuses to resume ``run_dir`` as anything but the run it holds.

    Args:
        run_dir (path): the run folder (``--out``).
        given (Mapping[str, Any]): the command's settings, as recorded.
        rounds (int, optional): the command's ``--rounds``, checked against
            where the run stands (:func:`check_rounds`). (default: not checked)

    Returns:
        the recorded settings (:obj:`None` for a folder without any).

    Raises:
        ValueError: one line: ``progress.json`` records trained rounds but
            ``checkpoints/last.pt`` (or ``best.pt``) is gone; a checkpoint
            records no settings; a file is from another run; or a setting
            differs (each differing key with its recorded and its given
            value).
    """
    run_dir = Path(run_dir)
    doc = _progress(run_dir)
    loaded = {p: _load(p, run_dir) for p in checkpoint_files(run_dir)}
    _check_complete(run_dir, doc, loaded)
    records = [] if doc is None else [(run_dir / PROGRESS, dict(doc["settings"]))]
    for path, obj in loaded.items():
        if not isinstance(obj.get("settings"), dict):
            raise ValueError(
                f"`--resume`: {path} records no run settings, so this command "
                "cannot be checked against the run that wrote it; train into a "
                "new `--out`"
            )
        records.append((path, obj["settings"]))
    _check_one_run(records)
    _check_settings(run_dir, records, given)
    last = loaded.get(run_dir / LAST)
    if rounds is not None and last is not None:
        check_rounds(run_dir, last, rounds)
    return dict(records[0][1]) if records else None


def _check_trainers(
    run_dir: Path, history: list[Any], loaded: Mapping[Path, Any], hint: str
) -> None:
    r"""Refuses a baseline run (Independent, Centralized) whose
    ``progress.json`` records validations of graph ``i`` but whose
    ``trainer{i}.pt`` is gone: that graph would train again from epoch 1."""
    for i, graph_history in enumerate(history):
        path = run_dir / f"trainer{i}.pt"
        if isinstance(graph_history, list) and graph_history and path not in loaded:
            n = len(graph_history)
            raise ValueError(
                f"`--resume`: {run_dir / PROGRESS} records {n} validation"
                f"{'s' * (n != 1)} of graph {i} but {path} is missing, so it would "
                f"train again from epoch 1; {hint}"
            )


def is_per_graph(history: Any) -> bool:
    r"""Whether ``history`` (of a ``progress.json`` or results file) is a
    baseline's, one list of validations per graph, rather than a federated
    run's, one entry per round; an empty history is neither (:obj:`False`)."""
    return isinstance(history, list) and bool(history) and isinstance(history[0], list)


def _check_complete(
    run_dir: Path, doc: Mapping[str, Any] | None, loaded: Mapping[Path, Any]
) -> None:
    r"""Refuses a run whose checkpoints are gone: resuming it would train
    again from round 1 (or test a best round it no longer has)."""
    history = doc.get("history") if doc is not None else None
    hint = "restore it from a copy, or train into a new `--out`"
    trained = len(history) if isinstance(history, list) else 0
    if trained and is_per_graph(history):  # a baseline's: one list per graph
        _check_trainers(run_dir, history, loaded, hint)
    elif trained and run_dir / LAST not in loaded:
        folder = run_dir / LAST.parent
        gone = run_dir / LAST if folder.is_dir() else folder
        raise ValueError(
            f"`--resume`: {run_dir / PROGRESS} records {trained} trained "
            f"round{'s' * (trained != 1)} but {gone} is missing, so the run would "
            f"start again from round 1; {hint}"
        )
    if (run_dir / RESULTS).is_file() and not loaded:
        raise ValueError(
            f"`--resume`: {run_dir} holds {RESULTS} but no checkpoint "
            f"(checkpoints/last.pt or trainer*.pt); {hint}"
        )
    last, best = loaded.get(run_dir / LAST), run_dir / "checkpoints" / "best.pt"
    if last is not None and last.get("best_value", -float("inf")) > -float("inf"):
        if best not in loaded:  # its best round was kept there
            raise ValueError(
                f"`--resume`: {best} is missing although the run kept a best "
                f"round; {hint}"
            )


def _check_one_run(records: list[tuple[Path, dict[str, Any]]]) -> None:
    r"""Refuses files of two runs (another ``run_id``) in one folder."""
    first: dict[Any, Path] = {}
    for path, settings in records:
        first.setdefault(settings.get("run_id"), path)
    if len(first) > 1:
        (a, pa), (b, pb) = list(first.items())[:2]
        raise ValueError(
            f"`--resume`: {pb} is from another run than {pa} (run id {b} against "
            f"{a}); restore this run's files from a copy, or train into a new "
            "`--out`"
        )


def _check_settings(
    run_dir: Path, records: list[tuple[Path, dict[str, Any]]], given: Mapping[str, Any]
) -> None:
    r"""Refuses ``given`` settings that differ from a record (one line)."""
    diff: dict[str, Any] = {}
    for _, settings in records:
        for key in differing_settings(settings, given):
            diff.setdefault(key, settings.get(key))
    if diff:
        shown = ", ".join(_shown(k, diff[k], given[k]) for k in sorted(diff))
        raise ValueError(
            f"`--resume`: {run_dir} was trained with other settings ({shown}); "
            "resume with the recorded ones or train into a new `--out`"
        )


def _shown(key: str, recorded: Any, given: Any) -> str:
    if key != "data_sha256":
        return f"{key} {recorded!r} -> {given!r}"

    def short(x: Any) -> str:
        return "none recorded" if x is None else str(x).removeprefix("sha256:")[:12]

    return f"data_sha256 {short(recorded)} -> {short(given)} (the data files changed)"


def check_rounds(
    run_dir: str | os.PathLike[str], last: Mapping[str, Any], rounds: int
) -> None:
    r"""Refuses a ``--rounds`` the run cannot honour, given its ``last``
    checkpoint: a finished run is not trained further (its test pass used
    its last round), so ``rounds`` must be the round it finished at, or,
    after early stopping, at least that round (a longer run stops there
    too); an unfinished run needs more ``rounds`` than it has trained.

    Raises:
        ValueError: one line naming ``--rounds`` and what to pass.
    """
    done = int(last["round"])
    early = bool(last.get("result", {}).get("stopped_early"))
    if not last.get("finished"):
        if rounds > done:
            return
        raise ValueError(
            f"`--rounds {rounds}`: {run_dir} has trained {done} rounds and not "
            f"finished; resume it with more `--rounds` than {done}"
        )
    if rounds == done or (early and rounds > done):
        return
    if early:
        raise ValueError(
            f"`--rounds {rounds}`: {run_dir} stopped early at round {done}, so a "
            f"run of {rounds} rounds would have ended sooner; resume it with "
            f"`--rounds {done}` or more to see its results, or train into a new "
            "`--out`"
        )
    raise ValueError(
        f"`--rounds {rounds}`: {run_dir} already finished at round {done}, its "
        "last; `--resume` does not train a finished run further: resume it with "
        f"`--rounds {done}` to see its results, or train into a new `--out` with "
        f"`--rounds {rounds}`"
    )


__all__ = [
    "FREE_KEYS",
    "REQUIRED_KEYS",
    "same_data",
    "data_fingerprint",
    "run_identity",
    "differing_settings",
    "recorded_settings",
    "checkpoint_files",
    "check_resume",
    "check_rounds",
    "is_per_graph",
]
