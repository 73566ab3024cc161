#!/bin/sh
# The privacy table on FedLU's FB15k-237 R3 partition (the fedlu-r3 dataset,
# TransE with FedLU's settings: dim 256, lr 1e-4, 3 local epochs, 256 shared
# negatives) by benchmarks/privacy_bench.sh, which lists the eight runs, their
# audits and the settings (NAMES, DO, EXTRA, DRY_RUN, ...). Here ROUNDS
# defaults to 110 (FedE's budget on R3 in docs/papers/server-optimisers.md) and
# THREADS to 2. A 110-round run takes about an hour on 2 quiet CPU cores
# (~20 s a round, ~60 s a validation).
#
#   ROUNDS=10 THREADS=1 benchmarks/privacy_fedlu_r3.sh runs/privacy-fedlu-r3-10
#   python benchmarks/privacy_table.py runs/privacy-fedlu-r3-10 fedlu-r3-privacy
set -eu
export ROUNDS="${ROUNDS:-110}" THREADS="${THREADS:-2}"
exec sh "$(dirname "$0")/privacy_bench.sh" "${1:-runs/privacy-fedlu-r3}" \
  "fedlu-r3 --model transe"
