r"""FedAlign's Table 3: per-client nodes and edges of the 10-client type-sampled
AIFB / MUTAG, over several partition seeds.

    python examples/rdf_partition_stats.py --out docs/results/rdf-fed10-partition.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from fedgraph.data.rdf_entities import load_rdf
from fedgraph.partition.rdf_type import RDFTypePartitioner

PAPER = {
    "aifb": (2993.00, 1737.77, 7923.60, 7092.13),
    "mutag": (6537.10, 2634.75, 4578.20, 1899.34),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args()
    out = {}
    for name, num_types in (("aifb", 6), ("mutag", 5)):
        g = load_rdf(name)
        rows = []
        t0 = time.perf_counter()
        for seed in range(a.seeds):
            s = RDFTypePartitioner(10, num_types=num_types, seed=seed)(g).stats()
            rows.append(
                {
                    "seed": seed,
                    "nodes": s["nodes"],
                    "edges": s["edges"],
                    "clients": [
                        {k: c[k] for k in ("nodes", "edges")} for c in s["clients"]
                    ],
                }
            )
        secs = (time.perf_counter() - t0) / a.seeds
        agg = {
            k: {m: statistics.fmean(r[k][m] for r in rows) for m in ("mean", "std")}
            for k in ("nodes", "edges")
        }
        spread = {
            k: statistics.stdev(r[k]["mean"] for r in rows) for k in ("nodes", "edges")
        }
        pn, ps, pe, pes = PAPER[name]
        print(
            f"{name}: nodes {agg['nodes']['mean']:.0f} ± {agg['nodes']['std']:.0f} "
            f"(seed spread of the mean {spread['nodes']:.0f}), edges "
            f"{agg['edges']['mean']:.0f} ± {agg['edges']['std']:.0f} "
            f"(spread {spread['edges']:.0f}); FedAlign: {pn:.0f} ± {ps:.0f}, {pe:.0f} ± {pes:.0f}; "
            f"{secs:.2f} s per partition"
        )
        out[name] = {
            "num_types": num_types,
            "seeds": rows,
            "mean_over_seeds": agg,
            "spread_of_mean": spread,
            "seconds_per_partition": secs,
            "fedalign_table3": {"nodes": [pn, ps], "edges": [pe, pes]},
        }
    if a.out is not None:
        a.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
