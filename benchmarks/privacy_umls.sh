#!/usr/bin/env bash
# The privacy table of docs/papers/privacy.md on UMLS split by relation over 3 clients
# (TransE, 30 rounds, one thread): FedE undefended, with DP at eps 1/4/16
# (delta 1e-5), with secure aggregation, with private alignment, FedR and FedR with secure aggregation;
# then both attacks on each run's recorded last round. Minutes on one core.
# Usage: benchmarks/privacy_umls.sh [WORK_DIR]   (needs FEDGRAPH_DATA)
set -euo pipefail
W=${1:-runs/privacy-umls}
FG="python -m fedgraph.cli.main"
mkdir -p "$W"
[ -d "$W/umls-r3" ] || $FG partition umls --strategy relation --clients 3 --out "$W/umls-r3"
COMMON=(--data "$W/umls-r3" --rounds 30 --eval-every 5 --patience 0 --dim 128
        --lr 0.001 --threads 1 --quiet --record-uploads last)
declare -A RUNS=(
  [fede]="--algorithm fede"
  [dp-eps1]="--algorithm fede --dp-epsilon 1"
  [dp-eps4]="--algorithm fede --dp-epsilon 4"
  [dp-eps16]="--algorithm fede --dp-epsilon 16"
  [secagg]="--algorithm fede --secagg"
  [alignment]="--algorithm fede --private-alignment"
  [fedr]="--algorithm fedr"
  [fedr-secagg]="--algorithm fedr --secagg"
)
for name in fede dp-eps1 dp-eps4 dp-eps16 secagg alignment fedr fedr-secagg; do
  out="$W/$name"
  [ -f "$out/results.json" ] || $FG train "${COMMON[@]}" ${RUNS[$name]} --out "$out"
  for attack in triple-inference membership; do
    $FG audit "$out" --attack "$attack" --known-fraction 0.1
  done
done
