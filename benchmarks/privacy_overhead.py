r"""Training seconds per round of FedE with each defence, back to back in one
process on one thread (the privacy table's wall-time ratios come from runs on
a shared CPU; this compares like with like).

Usage: python benchmarks/privacy_overhead.py PARTITION_DIR [ROUNDS]
"""

from __future__ import annotations

import sys
import tempfile

import torch

from fedgraph.data import load_dataset
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.privacy.setup import PrivacySettings, apply_privacy
from fedgraph.runtime import run_simulation

SETTINGS = {
    "fede": PrivacySettings(),
    "secagg": PrivacySettings(secagg=True),
    "dp": PrivacySettings(dp_epsilon=4),
    "alignment": PrivacySettings(private_alignment=True),
}


def main(data: str, rounds: int = 5) -> None:
    torch.set_num_threads(1)
    s = KGESettings(dim=128, lr=0.001)
    for rep in range(2):
        for name, p in SETTINGS.items():
            fed = load_dataset(data)
            st, cl = build_kge_federation("fede", fed, s)
            st, cl = apply_privacy(
                st,
                cl,
                p,
                rounds=rounds,
                run_dir=tempfile.mkdtemp(),
                entity_names=fed.entity_names,
            )
            r = run_simulation(
                st,
                cl,
                num_rounds=rounds,
                eval_every=rounds,
                patience=0,
                progress=False,
                test=False,
            )
            # round 1 pays one-off costs (compilation, key generation)
            secs = [h["train_seconds"] for h in r.history[1:]]
            print(
                f"pass {rep} {name}: {sum(secs) / len(secs):.3f} s per training round"
            )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
