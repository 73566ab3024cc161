#!/usr/bin/env bash
# The privacy table on FedLU's FB15k-237 R3 partition (TransE, FedLU's settings:
# dim 256, lr 1e-4, 3 local epochs, 256 shared negatives): FedE undefended, with
# DP at eps 1/4/16 (delta 1e-5), with secure aggregation, FedR (the six runs the
# table needs), then FedE with private alignment and FedR with secure
# aggregation; each run records its last round's uploads and is audited with
# both attacks (10 % of the client's triples known to the attacker).
#
# Settings (environment; defaults in brackets): ROUNDS [110, FedE's budget on
# R3 in docs/papers/server-optimisers.md], EVAL_EVERY [5], THREADS [2],
# NAMES [all eight, in the order above], DO ["train audit"; "train" only
# trains; "audit" waits for each run's results.json, then audits it, so that a
# second call with DO=audit audits on another core while one with DO=train
# trains], PYTHON [python], EXTRA [none; e.g. "--device cuda"].
# A 110-round run takes about an hour on 2 quiet CPU cores
# (~20 s a round, ~60 s a validation).
#
#   ROUNDS=10 THREADS=1 benchmarks/privacy_fedlu_r3.sh runs/privacy-fedlu-r3-10
#   python benchmarks/privacy_table.py runs/privacy-fedlu-r3-10 fedlu-r3-privacy
#
# Rerunning continues an unfinished run from its last checkpoint (--resume) and
# skips finished runs and audits. Needs FEDGRAPH_DATA.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-runs/privacy-fedlu-r3}
ROUNDS=${ROUNDS:-110}
EVAL_EVERY=${EVAL_EVERY:-5}
THREADS=${THREADS:-2}
NAMES=${NAMES:-fede dp-eps1 dp-eps4 dp-eps16 secagg fedr alignment fedr-secagg}
DO=${DO:-train audit}
PYTHON=${PYTHON:-python}
EXTRA=${EXTRA:-}
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
FG="$PYTHON -m fedgraph.cli.main"
mkdir -p "$W"
COMMON=(fedlu-r3 --model transe --rounds "$ROUNDS" --eval-every "$EVAL_EVERY"
        --patience 0 --threads "$THREADS" --quiet --record-uploads last $EXTRA)
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
for name in $NAMES; do
  out="$W/$name"
  if [ ! -f "$out/results.json" ] && [ "${DO#*train}" != "$DO" ]; then
    resume=()
    [ -d "$out/checkpoints" ] && resume=(--resume)
    echo "$(date -u +%FT%TZ) $name: train"
    $FG train "${COMMON[@]}" ${RUNS[$name]} --out "$out" "${resume[@]}"
  fi
  [ "${DO#*audit}" = "$DO" ] && continue
  while [ ! -f "$out/results.json" ]; do sleep 30; done
  for attack in triple-inference membership; do
    [ -f "$out/audit-$attack.json" ] && continue
    echo "$(date -u +%FT%TZ) $name: audit $attack"
    $FG audit "$out" --attack "$attack" --known-fraction 0.1
  done
done
echo "$(date -u +%FT%TZ) done"
