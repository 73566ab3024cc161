#!/usr/bin/env bash
# The privacy table on FedLU's FB15k-237 R3 partition (TransE, FedLU's settings):
# the same runs and audits as benchmarks/privacy_umls.sh. Hours of CPU per run
# (pass --device cuda through EXTRA to use a GPU).
# Usage: EXTRA="--device cuda" benchmarks/privacy_fedlu_r3.sh [WORK_DIR]
set -euo pipefail
W=${1:-runs/privacy-fedlu-r3}
FG="python -m fedgraph.cli.main"
EXTRA=${EXTRA:-}
mkdir -p "$W"
COMMON=(--data fedlu-r3 --rounds 200 --eval-every 5 --patience 0 --threads 1 --quiet
        --record-uploads last $EXTRA)
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
  [ -f "$out/results.json" ] || $FG train "${COMMON[@]}" ${RUNS[$name]} --out "$out" \
    || $FG train "${COMMON[@]}" ${RUNS[$name]} --out "$out" --resume
  for attack in triple-inference membership; do
    $FG audit "$out" --attack "$attack" --known-fraction 0.1
  done
done
