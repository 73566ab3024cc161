r"""Prints FedAlign's Table 4 with ours beside it from docs/results/*.json
(the table of the FedAlign results page, :func:`fedgraph.report.papers.fedalign_table`).

    python examples/rdf_results_table.py [--results DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fedgraph.report.papers import centralised_rgcn_table, fedalign_table


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--results",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "docs" / "results",
    )
    a = p.parse_args()
    print(centralised_rgcn_table(a.results))
    print()
    print(fedalign_table(a.results))


if __name__ == "__main__":
    main()
