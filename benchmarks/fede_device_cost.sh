#!/bin/sh
# What the FedE-claims runs (benchmarks/fede_claims.sh: FedE's settings and
# protocol) cost on a GPU, to size full runs in device time: a few FedE
# rounds (round 1 is the warm-up; one validation at round 5) and ten Single
# and Entire epochs (one validation) for DistMult and ComplEx, with the
# training samples drawn on the host (the CPU series' draws) or on the device
# (`--sample-on device`), the clients trained one after another or batched
# (`--local-training batched`). Each configuration is one `fedgraph train`
# command under `timeout`; its folder keeps progress.json (FedE: every
# round's train and validation seconds) or results.json (Single/Entire:
# seconds per epoch), and its log. Configurations run in the order below
# until BUDGET seconds are spent; a configuration that no longer fits is
# skipped and says so.
#
#   sh benchmarks/fede_device_cost.sh DATA OUTDIR [BUDGET] [DEVICE]
#   python benchmarks/fede_device_cost.py "alone=OUTDIR"    # the table
#
# DATA is a partition folder (`fedgraph partition fb15k-237 --strategy
# relation --clients 3 --seed 0 --out DATA`), DEVICE defaults to cuda.
set -u
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 DATA OUTDIR [BUDGET] [DEVICE]" >&2; exit 2; }
DATA=$1
DIR=$2
BUDGET=${3:-400}
DEVICE=${4:-cuda}
PYTHON=${PYTHON:-python3}
THREADS=${THREADS:-4}
[ -f "$DATA/META.json" ] || { echo "$0: $DATA/META.json not found (DATA: a partition folder)" >&2; exit 2; }
mkdir -p "$DIR"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
SETTINGS="--loss nssa --gamma 10 --dim 256 --lr 1e-3 --batch-size 512 \
 --num-negatives 256 --corrupt tail --no-subsampling --patience 15 \
 --protocol fede --seed 0 --threads $THREADS --device $DEVICE --quiet"
FEDE="--algorithm fede --rounds 10000 --local-epochs 3 --eval-every 5 --stop-after 6"
start=$(date +%s)

run() {  # NAME CAP_SECONDS [fedgraph train options]
    name=$1
    cap=$2
    shift 2
    left=$((BUDGET - ($(date +%s) - start)))
    if [ "$left" -lt 30 ]; then
        echo "$name: skipped ($left s of the budget left)"
        return 0
    fi
    [ "$cap" -gt "$left" ] && cap=$left
    t0=$(date +%s)
    # shellcheck disable=SC2086
    timeout "$cap" "$PYTHON" -m fedgraph.cli.main train "$DATA" \
        --out "$DIR/$name" $SETTINGS "$@" > "$DIR/$name.log" 2>&1
    rc=$?
    echo "$name: rc $rc in $(($(date +%s) - t0)) s (cap $cap s)"
    [ "$rc" -eq 0 ] || tail -n 3 "$DIR/$name.log"
}

run distmult-fede-host 90 $FEDE --model distmult
run distmult-fede-device 90 $FEDE --model distmult --sample-on device
run distmult-fede-batched 90 $FEDE --model distmult --local-training batched
run complex-fede-device 90 $FEDE --model complex --sample-on device
run distmult-single-device 80 --algorithm independent --model distmult \
    --rounds 10 --eval-every 10 --sample-on device
run distmult-entire-device 80 --algorithm centralized --model distmult \
    --rounds 10 --eval-every 10 --sample-on device
run complex-single-device 80 --algorithm independent --model complex \
    --rounds 10 --eval-every 10 --sample-on device
run complex-entire-device 80 --algorithm centralized --model complex \
    --rounds 10 --eval-every 10 --sample-on device
run complex-fede-host 90 $FEDE --model complex
echo "$(($(date +%s) - start)) s in all"
