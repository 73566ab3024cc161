#!/bin/sh
# The long FedLU-table reproductions (issues 4, 5, 6) in two lanes, one thread
# each (one per core on a 2-core machine). Every command resumes from its
# checkpoints under runs/ (git-ignored), so rerunning this script after a stop
# continues where each run was; finished runs only rewrite their results.
#
#   nohup sh benchmarks/fedlu_queue.sh > runs/queue.log 2>&1 &
#
# Lane A: Independent C3 and R3 (issue 4), then FedE/FedProx/FedEC on R3.
# Lane B: FedLU on C3 (issue 5, and the model issue 6 unlearns), then FedLU R3,
#         FedE/FedProx/FedEC on C3.
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

federated() {  # $1 = C3 | R3, $2 = algorithm
  p=$(echo "$1" | tr 'A-Z' 'a-z')
  fedgraph train --data "$D/$1" --algorithm "$2" --model transe \
    --out "runs/fedlu-$p-$2-transe" --threads 1 --quiet --resume \
    >> "runs/fedlu-$p-$2-transe.log" 2>&1
}

lane_a() {
  independent C3
  independent R3
  for alg in fede fedprox fedec; do federated R3 "$alg"; done
}

lane_b() {
  federated C3 fedlu
  federated R3 fedlu
  for alg in fede fedprox fedec; do federated C3 "$alg"; done
}

lane_a &
lane_b &
wait
