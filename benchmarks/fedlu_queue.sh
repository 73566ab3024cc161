#!/bin/sh
# The long FedLU-table reproductions (issues 4, 5, 6) in two lanes, one thread
# each (one per core on a 2-core machine). Every command resumes from its
# checkpoints under runs/ (git-ignored), so rerunning this script after a stop
# continues where each run was; finished runs only rewrite their results.
#
#   nohup sh benchmarks/fedlu_queue.sh > runs/queue.log 2>&1 &
#
# Lane A: Independent C3 and R3 (issue 4), then FedE/FedProx/FedEC on R3,
#         then FedEP and FedS on R10 (FedS's settings, issue 5).
# Lane B: FedLU on C3 (issue 5, and the model issue 6 unlearns), then FedLU R3,
#         FedE/FedProx/FedEC on C3.
#
# Edit this file only by writing a new copy and renaming it over the old one:
# sh reads a script as it runs it.
set -u
cd "$(dirname "$0")/.."
. .venv/bin/activate
export FEDGRAPH_DATA="${FEDGRAPH_DATA:-../shared/datasets}"
D=$FEDGRAPH_DATA/fedlu-fb15k-237
mkdir -p runs

independent() {  # $1 = C3 | R3
  p=$(echo "$1" | tr 'A-Z' 'a-z')
  python -m fedgraph.runtime.baselines --data "$D/$1" --setting independent \
    --model transe --dim 256 --gamma 9 --lr 1e-4 --batch-size 1024 \
    --num-negatives 256 --eval-every 5 --patience 3 --max-epochs 400 --seed 0 \
    --threads 1 --out "runs/fedlu-$p-independent-transe" \
    --results "docs/results/fedlu-$p-independent-transe.json" \
    >> "runs/fedlu-$p-independent-transe.log" 2>&1
}

federated_args() {  # $1 = C3 | R3 | R10, $2 = algorithm, then extra options
  d=$1
  p=$(echo "$1" | tr 'A-Z' 'a-z')
  a=$2
  shift 2
  fedgraph train --data "$D/$d" --algorithm "$a" --model transe \
    --out "runs/fedlu-$p-$a-transe" --threads 1 --quiet --resume "$@" \
    >> "runs/fedlu-$p-$a-transe.log" 2>&1
}

federated() {  # $1 = C3 | R3, $2 = algorithm (FedLU's settings, the defaults)
  federated_args "$1" "$2"
}

feds_r10() {  # $1 = fedep | feds; FedS §V: batch 512, gamma 8, self-adversarial loss
  federated_args R10 "$1" --batch-size 512 --gamma 8 --loss nssa --rounds 500 \
    --set p=0.4 --set sync_interval=4
}

lane_a() {
  independent C3
  independent R3
  for alg in fede fedprox fedec; do federated R3 "$alg"; done
  feds_r10 fedep
  feds_r10 feds
}

lane_b() {
  federated C3 fedlu
  federated R3 fedlu
  for alg in fede fedprox fedec; do federated C3 "$alg"; done
}

lane_a &
lane_b &
wait
