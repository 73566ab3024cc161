r"""Training seconds per round of FedE with each defence, back to back in one
process (the privacy tables' wall-time ratios come from runs on a shared CPU;
this compares like with like). Round 1 pays one-off costs (compilation, key
generation) and is left out of the mean.

Usage:
    python benchmarks/privacy_overhead.py runs/privacy-umls/umls-r3 --dim 128 --lr 0.001
    python benchmarks/privacy_overhead.py fedlu-r3 --rounds 3 --passes 1

DATA is a partition folder or a registered dataset (read under
$FEDGRAPH_DATA); --dim and --lr default to FedLU's settings (256, 1e-4), the
other KGE settings are the library's defaults.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="partition folder or registered dataset")
    p.add_argument("--rounds", type=int, default=5, help="rounds per setting (>= 2)")
    p.add_argument("--passes", type=int, default=2, help="passes over the settings")
    p.add_argument("--dim", type=int, default=KGESettings.dim)
    p.add_argument("--lr", type=float, default=KGESettings.lr)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    if a.rounds < 2:
        p.error(f"`--rounds` must be at least 2 (got {a.rounds}): round 1 is left out")
    torch.set_num_threads(a.threads)
    s = KGESettings(dim=a.dim, lr=a.lr)
    for rep in range(a.passes):
        for name, privacy in SETTINGS.items():
            fed = load_dataset(a.data)
            st, cl = build_kge_federation("fede", fed, s)
            st, cl = apply_privacy(
                st,
                cl,
                privacy,
                rounds=a.rounds,
                run_dir=tempfile.mkdtemp(),
                entity_names=fed.entity_names,
            )
            r = run_simulation(
                st,
                cl,
                num_rounds=a.rounds,
                eval_every=a.rounds,
                patience=0,
                progress=False,
                test=False,
            )
            secs = [h["train_seconds"] for h in r.history[1:]]
            print(
                f"pass {rep} {name}: {sum(secs) / len(secs):.3f} s per training round",
                flush=True,
            )


if __name__ == "__main__":
    main()
