#!/bin/sh
# Long `fedgraph train` runs on a remote GPU machine reached through a
# command-runner that returns only the files under $OUT, at most 8 of them and
# none large (no checkpoints: a FedLU partition's is ~140 MB), and one call
# lasts at most 10 minutes. So runs start in the background (setsid: they
# outlive the call that started them, as long as the machine is held), and
# each `poll` call sleeps, then packs every run's progress.json (and
# results.json once finished) and log into $OUT/runs.tgz. A run that the
# lease cuts off is reported from its progress.json (its learning curve).
# `start` trains TransE unless its options name another --model.
#
# Here, once per partition (compressed, ~3 MB each; .devdata/ is git-ignored):
#   mkdir -p .devdata && tar czf .devdata/R3.tgz -C $FEDGRAPH_DATA/fedlu-fb15k-237 R3
# On the device machine (carry .devdata; every call within 30 s of the last):
#   sh benchmarks/device_runs.sh start r3-fedec R3 fedec --per-positive-negatives --threads 4
#   sh benchmarks/device_runs.sh poll 560
# (FedProx and FedEC on R3 and C3 ran this way, four runs at once on one H100:
#  11-13 s per round each; docs/benchmarks.md.)
set -eu
ROOT=${DEVICE_RUNS:-/tmp/fedgraph-runs}
mkdir -p "$ROOT/data"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

case ${1:-} in
start)
  [ $# -ge 4 ] || { echo "usage: $0 start NAME PARTITION ALGORITHM [fedgraph train options]" >&2; exit 2; }
  name=$2 part=$3 alg=$4
  shift 4
  if [ ! -d "$ROOT/data/$part" ]; then
    [ -f ".devdata/$part.tgz" ] || { echo ".devdata/$part.tgz not found (carry .devdata)" >&2; exit 2; }
    tar xzf ".devdata/$part.tgz" -C "$ROOT/data"
  fi
  [ ! -e "$ROOT/$name" ] || { echo "$ROOT/$name exists: one run per name" >&2; exit 2; }
  setsid nohup python3 -m fedgraph.cli train "$ROOT/data/$part" --algorithm "$alg" \
    --model transe --device cuda --quiet --out "$ROOT/$name" "$@" \
    > "$ROOT/$name.log" 2>&1 < /dev/null &
  echo "started $name: $ROOT/$name.log"
  ;;
poll)
  sleep "${2:-0}"
  files=""
  for log in "$ROOT"/*.log; do
    [ -e "$log" ] || { echo "no runs under $ROOT" >&2; exit 2; }
    name=$(basename "$log" .log)
    files="$files $name.log"
    for f in progress results; do
      [ -f "$ROOT/$name/$f.json" ] && files="$files $name/$f.json"
    done
    echo "== $name: $(grep -c '^round' "$log") rounds"
    grep 'valid' "$log" | tail -n 2
    tail -n 1 "$log"
  done
  # one archive: the runner returns at most 8 files, and no checkpoints
  # shellcheck disable=SC2086
  [ -n "${OUT:-}" ] && (cd "$ROOT" && tar czf "$OUT/runs.tgz" $files)
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader || true
  ;;
*)
  echo "usage: $0 start NAME PARTITION ALGORITHM [options] | poll [SECONDS]" >&2
  exit 2
  ;;
esac
