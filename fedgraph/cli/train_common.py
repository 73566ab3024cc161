r"""What every family of ``fedgraph train`` (KGE in :mod:`fedgraph.cli.train`,
R-GCN in :mod:`fedgraph.cli.train_rgcn`, text in :mod:`fedgraph.cli.train_text`)
does alike: the loop's settings, ``results.json`` and the closing line,
and ``--resume`` on a finished run (checkpoints and ``progress.json`` are
:mod:`fedgraph.runtime.pipeline_run`'s)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from fedgraph.cli.choices import BASELINES


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


def loop_settings(args: argparse.Namespace, **fixed: Any) -> Any:
    r"""The :class:`~fedgraph.runtime.LoopSettings` of the command line (a
    family's ``fixed`` fields replacing the options')."""
    from fedgraph.runtime.loop import LoopSettings

    given = {
        "num_rounds": args.rounds,
        "fraction": args.fraction,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "seed": args.seed,
        "progress": not args.quiet,
        "stop_after": args.stop_after,
        "selection": args.selection,
    }
    return LoopSettings(**{**given, **fixed})


def write_and_report(
    args: argparse.Namespace,
    algorithm: str,
    res: Any,
    meta: dict[str, Any],
    clients: Any,
    privacy: Any = None,
) -> None:
    r"""Writes ``results.json`` (with each client's privacy spend under DP,
    ``privacy`` the run's :class:`~fedgraph.privacy.setup.PrivacySettings`)
    and prints the test metrics."""
    from fedgraph.privacy import setup as privacy_setup

    path = res.write_results(args.out / "results.json", settings=meta)
    if privacy is not None and privacy.active:  # each client's (epsilon, delta)
        privacy_setup.add_privacy_report(
            path, privacy_setup.privacy_report(clients, privacy)
        )
    w = res.test
    print(
        f"{algorithm} on {args.data}: {format_test_metrics(w)} (best round "
        f"{res.best_round}/{res.rounds}); results in {path}"
    )


__all__ = [
    "format_test_metrics",
    "loop_settings",
    "report_finished",
    "write_and_report",
]
