r"""Collects the runs of benchmarks/privacy_umls.sh (or privacy_fedlu_r3.sh)
into docs/results/PREFIX-NAME.json files (the run's results.json with its two
audit reports) and prints the markdown table of docs/privacy.md.

Usage: python benchmarks/privacy_table.py WORK_DIR PREFIX (e.g. umls-r3-privacy)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

NAMES = [
    "fede",
    "dp-eps1",
    "dp-eps4",
    "dp-eps16",
    "secagg",
    "alignment",
    "fedr",
    "fedr-secagg",
]
LABEL = {
    "fede": "FedE, no defence",
    "dp-eps1": "FedE + DP ε=1",
    "dp-eps4": "FedE + DP ε=4",
    "dp-eps16": "FedE + DP ε=16",
    "secagg": "FedE + SecAgg",
    "alignment": "FedE + private alignment",
    "fedr": "FedR",
    "fedr-secagg": "FedR + SecAgg",
}


def main(work: Path, prefix: str) -> None:
    out_dir = Path("docs/results")
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    base = None
    for name in NAMES:
        run = work / name
        if not (run / "results.json").is_file():
            continue
        res = json.loads((run / "results.json").read_text())
        audits = {}
        for a in ("triple-inference", "membership"):
            f = run / f"audit-{a}.json"
            if f.is_file():
                audits[a] = json.loads(f.read_text())
        doc = {"results": res, "audits": audits}
        (out_dir / f"{prefix}-{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        comm = res.get("comm", {})
        total = comm.get("bytes_up", 0) + comm.get("bytes_down", 0)
        secs = float(res.get("seconds_per_round", 0.0))
        if name == "fede":
            base = (total, secs)
        ti = audits.get("triple-inference", {})
        mi = audits.get("membership", {})
        eps = ""
        dp = res.get("privacy", {}).get("dp")
        if dp:
            eps = "/".join(f"{v['epsilon']:.3g}" for v in dp.values())
        rows.append(
            (
                LABEL[name],
                res["weighted"]["mrr"],
                ti.get("mean", {}).get("f1", float("nan")),
                ti.get("mean", {}).get("auc", float("nan")),
                ti.get("knowledge_only", {}).get("auc", float("nan")),
                mi.get("mean", {}).get("f1", float("nan")),
                mi.get("mean", {}).get("auc", float("nan")),
                total,
                secs,
                eps,
            )
        )
    print(
        "| setting | test MRR | triple F1 | triple AUC | AUC without rows | "
        "membership F1 | membership AUC | traffic (MB) | × FedE | s/round | × FedE | ε per client |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        tb = r[7] / 1e6 if r[7] else float("nan")
        xb = r[7] / base[0] if base and base[0] else float("nan")
        xs = r[8] / base[1] if base and base[1] else float("nan")
        print(
            f"| {r[0]} | {r[1]:.4f} | {r[2]:.3f} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f} | "
            f"{r[6]:.3f} | {tb:.2f} | {xb:.2f} | {r[8]:.1f} | {xs:.2f} | {r[9]} |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
