#!/bin/sh
# The eight runs of a privacy table of docs/papers/privacy.md on one dataset,
# each audited with both attacks of `fedgraph audit`: FedE undefended, with DP
# at eps 1/4/16 (delta 1e-5), with secure aggregation, with private alignment,
# FedR, and FedR with secure aggregation. benchmarks/privacy_umls.sh and
# benchmarks/privacy_fedlu_r3.sh call it with their dataset's arguments.
#
#   benchmarks/privacy_bench.sh WORK_DIR DATA [TRAIN_ARGS]
#
# DATA opens `fedgraph train`'s arguments and names the data ("fedlu-r3
# --model transe", "WORK_DIR/umls-r3"); TRAIN_ARGS are the dataset's
# training settings ("--dim 128 --lr 0.001"). Run NAME trains with
#
#   fedgraph train DATA --rounds ROUNDS --eval-every EVAL_EVERY --patience 0
#     TRAIN_ARGS --threads THREADS --quiet --record-uploads last EXTRA
#     SETTING --out WORK_DIR/NAME [--resume]
#
# (SETTING: "--algorithm fede --dp-epsilon 4" and so on, see `setting` below),
# recording its last round's uploads, then each attack runs on that round with
# 10 % of the client's triples known to the attacker:
#
#   fedgraph audit WORK_DIR/NAME --attack ATTACK --known-fraction 0.1
#
# Settings (environment; defaults in brackets):
#   ROUNDS       rounds of each run [required]
#   EVAL_EVERY   rounds between validations [5]
#   THREADS      threads of each command (also OMP_NUM_THREADS and
#                MKL_NUM_THREADS) [1]
#   NAMES        the runs, in this order [fede dp-eps1 dp-eps4 dp-eps16 secagg
#                alignment fedr fedr-secagg]
#   DO           ["train audit"]; "train" only trains; "audit" waits for each
#                run's results.json, then audits it, so that a call with
#                DO=audit audits on another core while one with DO=train trains
#   PARTITION    `fedgraph partition` arguments [none]: before training, their
#                partition is written to PARTITION_DIR unless that folder exists
#   PYTHON       the interpreter [python]
#   EXTRA        more `fedgraph train` arguments [none; e.g. "--device cuda"]
#   DRY_RUN      when set and not empty, print the commands this call would run,
#                one per line, and run nothing
#
# Rerunning continues an unfinished run from its last checkpoint (--resume) and
# skips finished runs and audits. DATA, TRAIN_ARGS and EXTRA are split at
# blanks, so WORK_DIR must not contain any. Runs from the repository root
# (relative paths are taken from there). Needs FEDGRAPH_DATA.
set -eu
cd "$(dirname "$0")/.."

die() {
  echo "privacy_bench.sh: $*" >&2
  exit 2
}

setting() { # $1 = run name (those of fedgraph.report.privacy.SETTINGS): its arguments
  case $1 in
    fede) echo "--algorithm fede" ;;
    dp-eps1) echo "--algorithm fede --dp-epsilon 1" ;;
    dp-eps4) echo "--algorithm fede --dp-epsilon 4" ;;
    dp-eps16) echo "--algorithm fede --dp-epsilon 16" ;;
    secagg) echo "--algorithm fede --secagg" ;;
    alignment) echo "--algorithm fede --private-alignment" ;;
    fedr) echo "--algorithm fedr" ;;
    fedr-secagg) echo "--algorithm fedr --secagg" ;;
    *) return 1 ;;
  esac
}
ALL="fede dp-eps1 dp-eps4 dp-eps16 secagg alignment fedr fedr-secagg"

count() { # $1 = setting, $2 = its value: a positive integer
  case $2 in
    '' | *[!0-9]* | 0*) die "$1 must be a positive integer (got '$2')" ;;
  esac
}

[ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: privacy_bench.sh WORK_DIR DATA [TRAIN_ARGS]"
W=$1 DATA=$2 ARGS=${3:-}
case $W in
  '' | *[[:space:]]*) die "WORK_DIR must be a path without blanks (got '$W')" ;;
esac
ROUNDS=${ROUNDS:-}
EVAL_EVERY=${EVAL_EVERY:-5}
THREADS=${THREADS:-1}
NAMES=${NAMES:-$ALL}
DO=${DO:-train audit}
PARTITION=${PARTITION:-}
PARTITION_DIR=${PARTITION_DIR:-}
PYTHON=${PYTHON:-python}
EXTRA=${EXTRA:-}
DRY_RUN=${DRY_RUN:-}
count ROUNDS "$ROUNDS"
count EVAL_EVERY "$EVAL_EVERY"
count THREADS "$THREADS"
for name in $NAMES; do
  setting "$name" > /dev/null || die "NAMES: unknown run '$name' (choices: $ALL)"
done
train=false audit=false
for step in $DO; do
  case $step in
    train) train=true ;;
    audit) audit=true ;;
    *) die "DO takes train, audit or both (got '$DO')" ;;
  esac
done
$train || $audit || die "DO takes train, audit or both (got '$DO')"
[ -z "$PARTITION" ] || [ -n "$PARTITION_DIR" ] || die "PARTITION needs PARTITION_DIR"

export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
FG="$PYTHON -m fedgraph.cli.main"

run() { # the command; with DRY_RUN, its line on stdout instead
  if [ -n "$DRY_RUN" ]; then echo "$*"; else "$@"; fi
}

log() {
  [ -n "$DRY_RUN" ] || echo "$(date -u +%FT%TZ) $*"
}

[ -n "$DRY_RUN" ] || mkdir -p "$W"
if $train && [ -n "$PARTITION" ] && [ ! -d "$PARTITION_DIR" ]; then
  log "partition"
  run $FG partition $PARTITION --out "$PARTITION_DIR"
fi
for name in $NAMES; do
  out=$W/$name
  if $train && [ ! -f "$out/results.json" ]; then
    resume=
    [ ! -d "$out/checkpoints" ] || resume=--resume
    log "$name: train"
    run $FG train $DATA --rounds "$ROUNDS" --eval-every "$EVAL_EVERY" --patience 0 \
      $ARGS --threads "$THREADS" --quiet --record-uploads last $EXTRA \
      $(setting "$name") --out "$out" $resume
  fi
  $audit || continue
  [ -n "$DRY_RUN" ] || while [ ! -f "$out/results.json" ]; do sleep 30; done
  for attack in triple-inference membership; do
    [ ! -f "$out/audit-$attack.json" ] || continue
    log "$name: audit $attack"
    run $FG audit "$out" --attack "$attack" --known-fraction 0.1
  done
done
log "done"
