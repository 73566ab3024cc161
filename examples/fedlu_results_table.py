r"""Prints the FedLU-partition tables from the results files under ``docs/results/``.

    python examples/fedlu_results_table.py                 # all tables
    python examples/fedlu_results_table.py --results DIR   # another folder

The first table compares each finished TransE run on the published FedLU
partitions (``fedlu-{r3,c3}-METHOD-transe.json``) with FedLU's Table 1
(weighted test MRR, %); the second is FedLU §5.3's unlearning table (Hits@1,
%); the third compares FedS with FedEP on R10 in FedS's communication metrics.
The tables live in :mod:`fedgraph.report.papers`, which also writes them into
the documentation's results pages (``python -m fedgraph.report.papers``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fedgraph.report.papers import (  # noqa: F401  (re-exported for scripts)
    PUBLISHED,
    PUBLISHED_FEDS,
    PUBLISHED_UNLEARN,
    ROWS,
    _length,
    _start,
    fedlu_tables,
    feds_table,
    link_prediction_table,
    unlearning_table,
)


def tables(results: Path) -> list[str]:
    r"""Every table this script prints (those with a results file)."""
    return fedlu_tables(results)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "docs" / "results",
        help="folder of the results files (default: docs/results)",
    )
    args = parser.parse_args(argv)
    print("\n\n".join(tables(args.results)))


if __name__ == "__main__":
    main()
