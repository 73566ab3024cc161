#!/bin/sh
# The privacy table of docs/papers/privacy.md on UMLS split by relation over 3
# clients (partition `umls --strategy relation --clients 3` in
# WORK_DIR/umls-r3; TransE, dim 128, lr 1e-3) by benchmarks/privacy_bench.sh,
# which lists the eight runs, their audits and the settings (NAMES, DO, EXTRA,
# DRY_RUN, ...). Here ROUNDS defaults to 30 and THREADS to 1. Minutes on one
# core.
#
#   benchmarks/privacy_umls.sh runs/privacy-umls
#   python benchmarks/privacy_table.py runs/privacy-umls umls-r3-privacy
set -eu
W=${1:-runs/privacy-umls}
export ROUNDS="${ROUNDS:-30}" THREADS="${THREADS:-1}"
export PARTITION="umls --strategy relation --clients 3" PARTITION_DIR="$W/umls-r3"
exec sh "$(dirname "$0")/privacy_bench.sh" "$W" "$W/umls-r3" \
  "--dim 128 --lr 0.001"
