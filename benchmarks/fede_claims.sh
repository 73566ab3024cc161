#!/bin/sh
# FedE's own claims on its own data (FedE, Chen et al. IJCKG 2021, Tables 3-5):
# Single (--algorithm independent), Entire (centralized) and FedE with RotatE
# and TransE on FB15k-237-Fed3 and NELL-995-Fed3, DistMult and ComplEx on
# both (FB15k-237-Fed3 first), and FedE's model fusion for RotatE on both and
# for TransE on FB15k-237-Fed3 (FedE's one published fusion script), all under FedE's
# evaluation protocol (--protocol fede: tails only, among the client's
# training entities, the client's own filter, the server's aggregated rows
# for FedE) and FedE's settings: self-adversarial loss (alpha 1), gamma 10,
# dim 256, Adam 1e-3, batch 512, 256 negatives, tails corrupted, no
# frequency weights, 3 local epochs, validation every 5 rounds
# (Single/Entire: every 10 epochs), patience 15 validations (FedE's code
# counts validations).
#
# One run at a time, in this order: RotatE Single, FedE and fusion on
# FB15k-237-Fed3 (the cheaper dataset per step on a CPU: 13k-entity client
# tables against NELL-995-Fed3's 24-38k), the same on NELL-995-Fed3; Single,
# FedE, Entire and fusion with TransE on FB15k-237-Fed3, then Single, FedE
# and Entire on NELL-995-Fed3 (a
# TransE step costs a third of a RotatE step); RotatE Entire on both; last,
# Single, FedE and Entire with DistMult and ComplEx on FB15k-237-Fed3, then
# on NELL-995-Fed3. Every
# run checkpoints under $RUNS (FedE: every round; Single/Entire: every
# validation) and is started with --resume once its folder exists, so
# rerunning this script continues where it stopped. A run is skipped when
# $RUNS/NAME/results.json exists, or when its results are recorded in
# $RESULTS/fede-NAME.json (RESULTS defaults to docs/results) and no fusion
# still to run needs its models (fusion reads the models in both runs'
# folders, not only their results). Keep $RUNS outside a clone that may be
# replaced (`runs/fede` may be a link to it). Each run holds $RUNS/NAME.lock
# (flock) while it runs, so a second copy of the script waits instead of
# writing the same checkpoints.
#
#   THREADS=2 PYTHON=.venv/bin/python nohup sh benchmarks/fede_claims.sh \
#       > runs/fede_claims.log 2>&1 &
#   python benchmarks/series_status.py runs/fede/*-*    # epochs/rounds, valid MRR
#   python docs/generate.py --print fede-claims-glance --results runs/fede --run-folders
#
# Partitions: `fedgraph partition DATASET --strategy relation --clients 3
# --seed 0` (the FB15k-237-Fed3 / NELL-995-Fed3 recipes in datasets/*.json),
# written once to $RUNS/data/.
#
# NELL-995-Fed3 runs get THP_MEM_ALLOC_ENABLE=1 (PyTorch's CPU allocator puts
# allocations of 2 MB and more on transparent huge pages): a step frees and
# re-allocates the dense gradient of the whole entity table, and on tables of
# 24-75k entities huge pages halve the step; on FB15k-237-Fed3's 13-15k they
# make it slower (docs/benchmarks.md, "Huge pages"). THP=0 or THP=1 sets it
# for every run instead.
#
# Edit this file only by writing a new copy and renaming it over the old one:
# sh reads a script as it runs it.
set -u
cd "$(dirname "$0")/.."
RUNS=${RUNS:-runs/fede}
RESULTS=${RESULTS:-docs/results}
THREADS=${THREADS:-1}
PYTHON=${PYTHON:-python}
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
F="$PYTHON -m fedgraph.cli.main"
mkdir -p "$RUNS/data"

SETTINGS="--loss nssa --gamma 10 --dim 256 --lr 1e-3 --batch-size 512 \
 --num-negatives 256 --corrupt tail --no-subsampling --patience 15 \
 --protocol fede --seed 0 --threads $THREADS --quiet"

partition() {  # DATASET NAME
    [ -f "$RUNS/data/$2/META.json" ] && return 0
    $F partition "$1" --strategy relation --clients 3 --seed 0 \
        --out "$RUNS/data/$2" --quiet
}

# The Single/FedE pairs whose models a fusion reads (DATASET-PREFIX-MODEL).
FUSIONS="fb15k237-fed3-rotate nell995-fed3-rotate fb15k237-fed3-transe"

recorded() {  # NAME: results in $RESULTS and no pending fusion needs the models
    [ -f "$RESULTS/fede-$1.json" ] || return 1
    case "$1" in
        *-single|*-fede) ;;
        *) return 0 ;;
    esac
    pair=${1%-*}
    case " $FUSIONS " in
        *" $pair "*) [ -f "$RESULTS/fede-$pair-fusion.json" ] ;;
        *) return 0 ;;
    esac
}

train() {  # NAME DATA ALGORITHM MODEL
    out="$RUNS/$1"
    if [ -f "$out/results.json" ]; then
        echo "$1: finished ($out/results.json)"
        return 0
    fi
    if recorded "$1"; then
        echo "$1: recorded ($RESULTS/fede-$1.json)"
        return 0
    fi
    case "$3" in
        fede) sched="--rounds 10000 --local-epochs 3 --eval-every 5" ;;
        *) sched="--rounds 10000 --eval-every 10" ;;
    esac
    resume=""
    [ -d "$out" ] && resume="--resume"
    case "${THP:-}:$2" in
        :nell-995-*) thp=1 ;;
        :*) thp=0 ;;
        *) thp=$THP ;;
    esac
    echo "$(date -u +%FT%TZ) $1: start $resume (THP_MEM_ALLOC_ENABLE=$thp)"
    THP_MEM_ALLOC_ENABLE=$thp flock "$RUNS/$1.lock" $F train "$RUNS/data/$2" --algorithm "$3" \
        --model "$4" --out "$out" $sched $SETTINGS $resume
    echo "$(date -u +%FT%TZ) $1: exit $?"
}

train3() {  # NAME-PREFIX DATA MODEL: Single, FedE and Entire
    for setting in single:independent fede:fede entire:centralized; do
        train "$1-$3-${setting%%:*}" "$2" "${setting#*:}" "$3"
    done
}

fuse() {  # DATASET-PREFIX MODEL (the pair must be listed in $FUSIONS)
    fed="$RUNS/$1-$2-fede"
    single="$RUNS/$1-$2-single"
    [ -f "$fed/fusion/results.json" ] && return 0
    [ -f "$RESULTS/fede-$1-$2-fusion.json" ] && return 0
    if [ -f "$fed/results.json" ] && [ -f "$single/results.json" ]; then
        echo "$(date -u +%FT%TZ) $1-$2: fusion"
        $F fuse "$fed" --single "$single" --threads "$THREADS"
    fi
}

partition nell-995 nell-995-fed3
partition fb15k-237 fb15k-237-fed3

train fb15k237-fed3-rotate-single fb15k-237-fed3 independent rotate
train fb15k237-fed3-rotate-fede fb15k-237-fed3 fede rotate
fuse fb15k237-fed3 rotate
train nell995-fed3-rotate-single nell-995-fed3 independent rotate
train nell995-fed3-rotate-fede nell-995-fed3 fede rotate
fuse nell995-fed3 rotate
train3 fb15k237-fed3 fb15k-237-fed3 transe
fuse fb15k237-fed3 transe
train3 nell995-fed3 nell-995-fed3 transe
train fb15k237-fed3-rotate-entire fb15k-237-fed3 centralized rotate
train nell995-fed3-rotate-entire nell-995-fed3 centralized rotate
for model in distmult complex; do
    train3 fb15k237-fed3 fb15k-237-fed3 "$model"
done
for model in distmult complex; do
    train3 nell995-fed3 nell-995-fed3 "$model"
done
echo "$(date -u +%FT%TZ) all runs of benchmarks/fede_claims.sh finished"
