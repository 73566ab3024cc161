#!/bin/sh
# The FedLU-table reproductions (FedLU Table 1 and §5.3, FedS on R10) as named
# runs, TransE on FedLU's published partitions. Each run resumes from its
# checkpoints under runs/ (git-ignored), so rerunning a name after a stop
# continues where it was (a finished `fedgraph train` run is left as it is; a
# finished baseline re-tests and rewrites its results). Each run holds
# runs/NAME.lock (flock) while it runs, so a second call with the same name
# waits instead of writing the same checkpoints. Results go to
# docs/results/fedlu-NAME-transe.json (baselines, unlearning) or
# runs/fedlu-NAME-transe/results.json (federated runs).
#
#   sh benchmarks/run_series.sh list                  # the names
#   export FEDGRAPH_DATA=/path/to/datasets           # holds fedlu-fb15k-237/
#   nohup sh benchmarks/run_series.sh r3-fede c3-fede > runs/series.log 2>&1 &
#   THREADS=2 sh benchmarks/run_series.sh r10-feds    # threads per run (default 1)
#   python benchmarks/series_status.py                # rounds, s/round, validation curve
#
# On a 2-core CPU a FedE-family run on R3 or C3 (75-130 rounds at 52-65 s per
# round with both cores) takes 1.3-2 hours; FedLU about twice as long per
# round; FedEP and FedS on R10 several hundred rounds. `--device cuda` (add it
# after the name's options in this file) runs them on a GPU.
#
# Edit this file only by writing a new copy and renaming it over the old one:
# sh reads a script as it runs it.
set -u
cd "$(dirname "$0")/.."
. .venv/bin/activate
# threads per run (a run resumes with another count: only float rounding differs)
THREADS=${THREADS:-1}
mkdir -p runs

locked() {  # $1 = run name, then the command
  name=$1
  shift
  flock "runs/$name.lock" "$@" >> "runs/$name.log" 2>&1
}

independent_as() {  # $1 = C3 | R3, $2 = method name, then options (later ones win)
  p=$(echo "$1" | tr 'A-Z' 'a-z')
  m=$2
  d=$1
  shift 2
  locked "fedlu-$p-$m-transe" \
    python -m fedgraph.cli.baselines --data "$D/$d" --setting independent \
    --model transe --dim 256 --gamma 9 --lr 1e-4 --batch-size 1024 \
    --num-negatives 256 --eval-every 5 --patience 3 --max-epochs 400 --seed 0 \
    --threads "$THREADS" --out "runs/fedlu-$p-$m-transe" \
    --results "docs/results/fedlu-$p-$m-transe.json" "$@"
}

federated_as() {  # $1 = C3 | R3 | R10, $2 = method name, $3 = algorithm, then options
  d=$1
  p=$(echo "$1" | tr 'A-Z' 'a-z')
  m=$2
  a=$3
  shift 3
  locked "fedlu-$p-$m-transe" \
    fedgraph train "$D/$d" --algorithm "$a" --model transe \
    --out "runs/fedlu-$p-$m-transe" --threads "$THREADS" --quiet --resume "$@"
}

gated="--set distill_schedule=gated --set distill_wait=20"
feds="--batch-size 512 --gamma 8 --loss nssa --rounds 500"  # FedS §V

run() {  # $1 = a name of `list`
  case $1 in
    r3-independent) independent_as R3 independent ;;
    c3-independent) independent_as C3 independent ;;
    # FedLU's Independent script (run_local.sh): batch 512, validation every 10
    c3-independent-runlocal) independent_as C3 independent-runlocal \
        --batch-size 512 --eval-every 10 --max-epochs 200 ;;
    r3-fede | c3-fede | r3-fedec | c3-fedec | r3-fedprox | c3-fedprox)
      d=$(echo "${1%%-*}" | tr 'a-z' 'A-Z')
      federated_as "$d" "${1#*-}" "${1#*-}" ;;
    # FedProx with the proximal term's mean over entities (what FedLU's
    # --mu_single_entity flag names; its sum over the table trains far slower)
    r3-fedprox-mean | c3-fedprox-mean)
      d=$(echo "${1%%-*}" | tr 'a-z' 'A-Z')
      federated_as "$d" fedprox-mean fedprox --set proximal_reduction=entity-mean ;;
    # FedLU: the paper's Algorithm 1 (distillation from round 1), and the
    # gated distillation of FedLU's code; the C3 results files were made with
    # the local tables' own random start (local_init=own), R3's with the
    # default start from the global rows (as FedLU's code)
    c3-fedlu) federated_as C3 fedlu fedlu --rounds 35 --set local_init=own ;;
    # shellcheck disable=SC2086
    r3-fedlu-gated) federated_as R3 fedlu-gated fedlu $gated ;;
    # shellcheck disable=SC2086
    c3-fedlu-gated) federated_as C3 fedlu-gated fedlu $gated --set local_init=own ;;
    c3-fedlu-gated-globalinit)
      # shellcheck disable=SC2086
      federated_as C3 fedlu-gated-globalinit fedlu $gated --set local_init=global ;;
    # an ablation, not FedLU: the global model trains a relation table of its own
    r3-fedlu-gated-ownrel | c3-fedlu-gated-ownrel)
      d=$(echo "${1%%-*}" | tr 'a-z' 'A-Z')
      # shellcheck disable=SC2086
      federated_as "$d" fedlu-gated-ownrel fedlu $gated --set global_relations=own ;;
    # FedLU §5.3 on the C3 FedLU model and the published forgetting sets
    c3-fedlu-unlearn)
      locked fedlu-c3-fedlu-unlearn-transe \
        fedgraph unlearn runs/fedlu-c3-fedlu-transe --forget "$D/C3" \
        --threads "$THREADS" --resume \
        --results docs/results/fedlu-c3-fedlu-unlearn-transe.json ;;
    # shellcheck disable=SC2086
    r10-fedep) federated_as R10 fedep fedep $feds ;;
    # shellcheck disable=SC2086
    r10-feds) federated_as R10 feds feds $feds --set p=0.4 --set sync_interval=4 ;;
    *) echo "unknown run: $1 (sh benchmarks/run_series.sh list)" >&2; return 2 ;;
  esac
}

NAMES="r3-independent c3-independent c3-independent-runlocal r3-fede c3-fede
r3-fedprox c3-fedprox r3-fedprox-mean c3-fedprox-mean r3-fedec c3-fedec c3-fedlu
c3-fedlu-unlearn r3-fedlu-gated c3-fedlu-gated c3-fedlu-gated-globalinit
r3-fedlu-gated-ownrel c3-fedlu-gated-ownrel r10-fedep r10-feds"

if [ $# -eq 0 ] || [ "$1" = list ]; then
  echo $NAMES | tr ' ' '\n'
  exit 0
fi
for name in "$@"; do  # validate every name before running any
  case " $(echo $NAMES) " in
    *" $name "*) ;;
    *) echo "unknown run: $name (sh benchmarks/run_series.sh list)" >&2; exit 2 ;;
  esac
done
[ -n "${FEDGRAPH_DATA:-}" ] || {
  echo "run_series.sh: error: set FEDGRAPH_DATA to the data root holding fedlu-fb15k-237" >&2
  exit 2
}
D=$FEDGRAPH_DATA/fedlu-fb15k-237
[ -d "$D" ] || { echo "run_series.sh: error: $D: no such folder (FedLU's partitions)" >&2; exit 2; }
for name in "$@"; do
  run "$name"
done
