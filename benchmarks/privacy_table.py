r"""Collects the runs of a privacy benchmark (benchmarks/privacy_bench.sh, through
benchmarks/privacy_umls.sh or privacy_fedlu_r3.sh) into
docs/results/PREFIX-NAME.json files (the run's results.json with its two
audit reports) and prints their markdown table, the table that
``python docs/generate.py`` writes into docs/papers/privacy.md
(:func:`fedgraph.report.privacy.privacy_table`).

Usage: python benchmarks/privacy_table.py WORK_DIR PREFIX (e.g. umls-r3-privacy)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fedgraph.data.io import atomic_write_text
from fedgraph.privacy.attacks import ATTACKS
from fedgraph.report.privacy import SETTINGS, privacy_table


def collect(work: Path, prefix: str, out_dir: Path) -> list[Path]:
    r"""Writes ``out_dir/PREFIX-NAME.json`` for each run ``work/NAME`` of
    :data:`~fedgraph.report.privacy.SETTINGS` that has a ``results.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, _ in SETTINGS:
        run = work / name
        if not (run / "results.json").is_file():
            continue
        res = json.loads((run / "results.json").read_text())
        audits = {}
        for a in ATTACKS:
            f = run / f"audit-{a}.json"
            if f.is_file():
                audits[a] = json.loads(f.read_text())
        doc = {"results": res, "audits": audits}
        target = out_dir / f"{prefix}-{name}.json"
        atomic_write_text(target, json.dumps(doc, indent=1) + "\n")
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    work, prefix = Path(argv[0]), argv[1]
    if not work.is_dir():
        print(f"error: WORK_DIR {work} is not a folder", file=sys.stderr)
        return 2
    out_dir = Path("docs/results")
    collect(work, prefix, out_dir)
    print(privacy_table(out_dir, prefix))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
