r"""What every family of ``fedgraph train`` (KGE in :mod:`fedgraph.cli.train`,
R-GCN in :mod:`fedgraph.cli.train_rgcn`, text in :mod:`fedgraph.cli.train_text`)
does alike: the privacy settings of the command line, ``progress.json``
after every round, ``results.json`` and the closing line, and ``--resume`` on
a finished run."""

from __future__ import annotations

import argparse
import json
from typing import Any

from fedgraph import guard
from fedgraph.cli.choices import BASELINES


def privacy_settings(args: argparse.Namespace) -> Any:
    r"""The :class:`~fedgraph.privacy.setup.PrivacySettings` of the command line."""
    from fedgraph.privacy.setup import settings_from_args

    return settings_from_args(args)


def format_test_metrics(w: dict[str, float]) -> str:
    r"""The closing line's test metrics, alike for every KGE run."""
    return (
        f"test mrr {w['mrr']:.4f} hits@1 {w['hits@1']:.4f} "
        f"hits@3 {w['hits@3']:.4f} hits@10 {w['hits@10']:.4f}"
    )


def report_finished(args: argparse.Namespace, algorithm: str) -> bool:
    r"""``--resume`` on a finished federated run: its best round was tested
    and its results written (resuming would only repeat the test pass), so
    print them and leave the folder as it is."""
    finished = args.out / "results.json"
    if not finished.exists() or algorithm in BASELINES:
        return False
    done = json.loads(finished.read_text())
    ran = done.get("settings", {}).get("algorithm")
    if ran != algorithm:
        raise ValueError(
            f"`--out` {args.out} holds a finished {ran!r} run, not {algorithm!r}"
        )
    print(
        f"{algorithm} run in {args.out} already finished at round {done['rounds']} "
        f"(best round {done.get('best_round')}): test mrr "
        f"{done['weighted']['mrr']:.4f}; {finished} left as written"
    )
    return True


def progress_writer(args: argparse.Namespace, meta: dict[str, Any]) -> Any:
    r"""The ``on_round`` callback: ``progress.json`` rewritten atomically
    after every round, and the round's line printed (with or without
    ``--quiet``: :func:`fedgraph.progress.step_line`)."""
    from fedgraph.data.io import atomic_write_json
    from fedgraph.progress import say, step_line

    guard.claim(args.out, fresh=not args.resume)  # every family: locked to the end
    progress_path = args.out / "progress.json"
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
        say(step_line(entry, step="round", of=args.rounds))

    return on_round


def write_and_report(
    args: argparse.Namespace,
    algorithm: str,
    res: Any,
    meta: dict[str, Any],
    clients: Any,
    privacy: Any,
) -> None:
    r"""Writes ``results.json`` (with each client's privacy spend under DP)
    and prints the test metrics."""
    from fedgraph.privacy import setup as privacy_setup

    path = res.write_results(args.out / "results.json", settings=meta)
    if privacy.active:  # each client's (epsilon, delta) under DP
        privacy_setup.add_privacy_report(
            path, privacy_setup.privacy_report(clients, privacy)
        )
    w = res.test
    print(
        f"{algorithm} on {args.data}: {format_test_metrics(w)} (best round "
        f"{res.best_round}/{res.rounds}); results in {path}"
    )


__all__ = [
    "privacy_settings",
    "format_test_metrics",
    "report_finished",
    "progress_writer",
    "write_and_report",
]
