r"""Regenerates the results pages (``docs/papers/``) from ``docs/results/*.json``
and the published numbers in ``docs/papers/published/*.json``.

    python docs/generate.py                  # rewrite the generated blocks and figures
    python docs/generate.py --check          # exit 1 when a page or figure is stale
    python docs/generate.py --print fedlu-table --results DIR   # one block, printed
    python docs/generate.py --print fede-claims-glance --results runs/fede --run-folders

Run from a clone of fedgraph (the package itself is imported from the
environment); the blocks and pages are in :mod:`generator.pages`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from generator.fede_claims_runs import stage_run_folders
from generator.files import PAGES, RESULTS
from generator.pages import BLOCKS
from generator.render import generate, stale


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python docs/generate.py",
        description="Regenerates the results pages (docs/papers) from docs/results/*.json.",
    )
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--pages", type=Path, default=PAGES)
    p.add_argument("--check", action="store_true", help="only report stale pages")
    p.add_argument("--print", nargs="+", metavar="BLOCK", dest="blocks",
                   help="print these generated blocks instead of writing pages")  # fmt: skip
    p.add_argument("--run-folders", action="store_true",
                   help="with --print: read benchmarks/fede_claims.sh's run folders "
                   "under --results")  # fmt: skip
    return p


def _print_blocks(names: Sequence[str], results: Path, run_folders: bool) -> int:
    unknown = [n for n in names if n not in BLOCKS]
    if unknown:
        print(f"error: `--print` {unknown[0]!r} is no generated block "
              f"(choose from {', '.join(sorted(BLOCKS))})", file=sys.stderr)  # fmt: skip
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if run_folders:
            stage_run_folders(results, Path(tmp))
            results = Path(tmp)
        for name in names:
            print(f"<!-- {name} -->\n{BLOCKS[name](results)}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    for folder, what in ((a.pages, "--pages"), (a.results, "--results")):
        if not folder.is_dir():
            print(f"error: `{what}` {folder} is not a folder", file=sys.stderr)
            return 2
    if a.blocks:
        return _print_blocks(a.blocks, a.results, a.run_folders)
    if a.check:
        bad = stale(a.pages, a.results)
        for line in bad:
            print(line)
        return 1 if bad else 0
    for path in generate(a.pages, a.results):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
