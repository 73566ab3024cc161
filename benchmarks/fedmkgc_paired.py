r"""Two finished FedMKGC runs compared on the same test queries.

For each language asked, the script rebuilds that language's client of each
run from the run's recorded settings and its tested checkpoint
(``checkpoints/best.pt``, with the model the server sends for the test
pass), ranks the client's test triples again and keeps every query's
filtered reciprocal rank. The two runs rank the same queries (the same
triples, both directions), so the difference of their MRR is a mean of
per-query differences: the script gives it with a paired bootstrap
interval over the queries (resampling test triples with both their
directions) and the share of queries on which each run ranks higher. The
interval covers the spread of the test sample only, not that of the
training seed.

Each run's recomputed metrics must equal its results file's (to 1e-9): the
script fails otherwise, so the ranks are those the published numbers came
from::

    python benchmarks/fedmkgc_paired.py \
        runs/fedmkgc-reduced/e5-s20r3-fedmkgc-en-fr-es-ja-el \
        runs/fedmkgc-reduced/e5-s20r3-independent-en-fr-es-ja-el \
        --languages el ja --out docs/results/fedmkgc-paired-e5-s20r3.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.checkpoint import load_checkpoint
from fedgraph.data.io import atomic_write_json
from fedgraph.eval import LinkPredState
from fedgraph.federated.text.setup import (
    MKGCSettings,
    build_fedmkgc_clients,
    build_text_strategy,
    load_text_model,
)
from fedgraph.runtime.fedmkgc_runner import load_language_graphs


class RecordedRanks(LinkPredState):
    r"""A :class:`~fedgraph.eval.LinkPredState` that also keeps every rank,
    per direction, in the order ranked."""

    def __init__(self) -> None:
        super().__init__()
        self.ranks: dict[str, list[Tensor]] = {"head": [], "tail": []}

    def update(self, ranks: Tensor, direction: str) -> RecordedRanks:
        super().update(ranks, direction)
        self.ranks[direction].append(ranks.detach().double().clone())
        return self

    def reciprocal_ranks(self) -> Tensor:
        r"""``[n, D]``: per test triple the reciprocal rank of each ranked
        direction (tail first)."""
        cols = [torch.cat(self.ranks[d]) for d in ("tail", "head") if self.ranks[d]]
        return torch.stack(cols, 1).reciprocal()


class InputError(Exception):
    r"""Bad input: :func:`main` prints it on one line and exits with 2."""


def _finished(run: Path) -> dict[str, Any]:
    path = run / "results.json"
    if not path.is_file():
        raise InputError(f"{path}: no results file (the run has not finished)")
    doc = json.loads(path.read_text())
    if doc.get("settings", {}).get("family") != "text":
        raise InputError(f"{path}: not a text (FedMKGC) run")
    return doc


def run_ranks(run: Path, languages: list[str], root: Path | None) -> dict[str, Any]:
    r"""Per language of ``languages``: the ``[n, D]`` test reciprocal ranks
    of the run's tested model and its recomputed metrics, checked against
    its results file."""
    doc = _finished(run)
    rec = doc["settings"]
    order = list(rec["client_languages"])
    missing = [x for x in languages if x not in order]
    if missing:
        raise InputError(f"{run}: no client for language(s) {missing}")
    fields = {f.name for f in dataclasses.fields(MKGCSettings)}
    settings = MKGCSettings(**{k: v for k, v in rec.items() if k in fields})
    graphs = load_language_graphs(rec["data"], languages, root)
    encoder, tokenizer = load_text_model(rec["encoder"], "the run's encoder")
    ids = [order.index(x) for x in languages]
    clients = build_fedmkgc_clients(
        list(graphs.values()), encoder, tokenizer, settings, client_ids=ids
    )
    strategy = build_text_strategy(rec["algorithm"], encoder, settings)
    del encoder
    best = load_checkpoint(
        run / "checkpoints" / "best.pt", keys=("strategy", "clients"), mmap=True
    )
    strategy.load_state_dict(best["strategy"])
    for c in ids:
        clients[c].load_state_dict(best["clients"][c])
    payloads = strategy.configure_evaluate(int(doc["rounds"]), ids, "test")
    del best
    out = {}
    for lang, c in zip(languages, ids, strict=True):
        client = clients[c]
        # the model the server sends for the test (before any ranking, so the
        # client encodes its entities under it)
        if payloads[c].arrays:
            client.model.load_shared_arrays(payloads[c].arrays)
        t0 = time.perf_counter()
        state = client.rank("test", RecordedRanks())
        mine, theirs = state.compute(), doc["clients"][c]
        for key in ("mrr", "hits@1", "hits@10"):
            if abs(mine[key] - theirs[key]) > 1e-9:
                raise InputError(
                    f"{run}: {lang} test {key} recomputed as {mine[key]!r}, "
                    f"the results file has {theirs[key]!r}"
                )
        out[lang] = {
            "rr": state.reciprocal_ranks(),
            "metrics": {k: mine[k] for k in ("mrr", "hits@1", "hits@10")},
            "triples": int(client.ranked_triples("test").size(0)),
            "seconds": time.perf_counter() - t0,
        }
        print(f"{run.name} {lang}: test MRR {100 * mine['mrr']:.2f} (as recorded)")
    return out


def paired(a: Tensor, b: Tensor, resamples: int, seed: int) -> dict[str, Any]:
    r"""The MRR difference ``a`` − ``b`` (``[n, D]`` reciprocal ranks of
    the same queries) with a 95 % paired bootstrap interval over the ``n``
    test triples, and the shares of queries each ranks higher."""
    diff = (a - b).mean(1)  # per triple, its directions together
    gen = torch.Generator().manual_seed(seed)
    draws = torch.randint(0, diff.numel(), (resamples, diff.numel()), generator=gen)
    means = diff[draws].mean(1)
    low, high = torch.quantile(means, torch.tensor([0.025, 0.975], dtype=means.dtype))
    flat_a, flat_b = a.flatten(), b.flatten()
    return {
        "mrr_difference": float(diff.mean()),
        "ci95": [float(low), float(high)],
        "share_of_resamples_above_zero": float((means > 0).double().mean()),
        "queries": int(flat_a.numel()),
        "a_ranks_higher": float((flat_a > flat_b).double().mean()),
        "b_ranks_higher": float((flat_a < flat_b).double().mean()),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_a", type=Path, help="a finished run's folder (e.g. FedMKGC)")
    p.add_argument("run_b", type=Path, help="the run to compare with (Independent)")
    p.add_argument("--languages", nargs="+", required=True, help="e.g. el ja")
    p.add_argument("--root", type=Path, help="data root (default: $FEDGRAPH_DATA)")
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, help="the results JSON to write")
    args = p.parse_args(argv)
    if args.resamples < 100:
        p.error(f"--resamples must be at least 100 (got {args.resamples})")
    torch.set_num_threads(args.threads)
    try:
        return _compare(args, argv)
    except (InputError, ValueError, OSError) as err:  # a bad checkpoint: ValueError
        print(f"error: {err}", file=sys.stderr)
        return 2


def _compare(args: argparse.Namespace, argv: list[str] | None) -> int:
    t0 = time.perf_counter()
    ranks = {
        r: run_ranks(r, args.languages, args.root) for r in (args.run_a, args.run_b)
    }
    a, b = (ranks[r] for r in (args.run_a, args.run_b))
    doc: dict[str, Any] = {
        "command": "python benchmarks/fedmkgc_paired.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "run_a": args.run_a.name,
        "run_b": args.run_b.name,
        "resamples": args.resamples,
        "seed": args.seed,
        "languages": {},
    }
    for lang in args.languages:
        if a[lang]["rr"].shape != b[lang]["rr"].shape:
            raise InputError(
                f"{lang}: the runs ranked different test queries "
                f"({tuple(a[lang]['rr'].shape)} against {tuple(b[lang]['rr'].shape)})"
            )
        doc["languages"][lang] = {
            "test_triples": a[lang]["triples"],
            "a": a[lang]["metrics"],
            "b": b[lang]["metrics"],
            **paired(a[lang]["rr"], b[lang]["rr"], args.resamples, args.seed),
        }
        d = doc["languages"][lang]
        low, high = (100 * x for x in d["ci95"])
        print(
            f"{lang}: MRR difference {100 * d['mrr_difference']:+.2f} "
            f"(95 % paired bootstrap {low:+.2f} to {high:+.2f}; "
            f"{d['queries']} queries)"
        )
    doc["seconds"] = time.perf_counter() - t0
    if args.out is not None:
        atomic_write_json(args.out, doc, indent=2)
        print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
