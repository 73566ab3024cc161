#!/bin/sh
# Centralised KGE on FB15k-237's own split (filtered, head and tail) with the
# shipped recipes at a budget a 2-core CPU can give, run by name, one at a
# time, each resumable:
#
#   complex-n3       --recipe complex-n3-fb15k-237 (Lacroix et al. 2018:
#                    ComplEx, reciprocal relations, 1-vs-all cross-entropy,
#                    N3) at rank DIM (default 200; the source: 1000) for
#                    EPOCHS epochs (default 30; the source: 100)
#   rotate           --recipe rotate-fb15k-237 (Sun et al. 2019) at
#                    dimension DIM for EPOCHS epochs (the source: 1000 and
#                    about 188 epochs)
#   NAME=RECIPE      any shipped recipe under a name of its own
#   transe-libkge    --recipe transe-libkge-fb15k-237 (LibKGE's ICLR 2020
#                    configuration) at the recipe's own settings: its
#                    dimension, epochs, validation and early stopping
#   distmult-libkge, complex-libkge   the same for DistMult and ComplEx
#
#   mkdir -p runs && PYTHON=.venv/bin/python \
#       nohup sh benchmarks/kge_fb15k237.sh complex-n3 > runs/kge-fb15k237.log 2>&1 &
#   python benchmarks/series_status.py runs/kge-fb15k237/*
#
# Each budgeted run validates every EVAL_EVERY epochs (default 2) and never
# stops early (--patience 0), so its test metrics are those of its best
# validation within the budget; the budget (rank and epochs, against the
# recipe's) is part of the run's name (complex-n3-d200-e30) and of its
# recorded command. A *-libkge run takes every setting from its recipe. Rerunning the
# script continues each run from its last validation (--resume; the baselines
# checkpoint at every validation); a run with a results.json is reported and
# left as it is, and its results.json is copied to
# RESULTS/kge-fb15k237-NAME.json (machine paths rewritten by
# scripts/scrub_results.py). Each run holds RUNS/NAME.lock (flock) while it
# trains, and every command is appended to RUNS/commands.txt.
#
# With ALGORITHM=fede or independent and DATA a federated folder (FedLU's
# R3), the same recipe trains federated clients or each client alone: every
# client takes one epoch a round (--local-epochs 1), so EPOCHS rounds give
# each client EPOCHS epochs in both. TAG prefixes the runs' and results'
# names:
#
#   TAG=r3-fede- ALGORITHM=fede DATA=fedlu-fb15k-237-r3 \
#       EPOCHS=10 EVAL_EVERY=1 sh benchmarks/kge_fb15k237.sh complex-n3
#
# EXTRA adds options to every run's command, which win over the recipe's;
# name the variant with SUFFIX (appended to the run's name). A recipe with one
# setting changed, as a control run:
#
#   EXTRA="--num-negatives 61" SUFFIX=-neg61 sh benchmarks/kge_fb15k237.sh transe-libkge
#
# Settings (environment; defaults in brackets): RUNS [runs/kge-fb15k237],
# DATA [fb15k-237, read under the data root: FEDGRAPH_DATA, else the user
# cache, where fedgraph downloads it], ALGORITHM [centralized],
# TAG [none], SUFFIX [none], EXTRA [none], DIM [200], EPOCHS [30],
# EVAL_EVERY [2], THREADS [2], NICE [10], PYTHON [python],
# RESULTS [docs/results].
#
# Edit this file only by writing a new copy and renaming it over the old one:
# sh reads a script as it runs it.
set -u
cd "$(dirname "$0")/.."
RUNS=${RUNS:-runs/kge-fb15k237}
DATA=${DATA:-fb15k-237}
ALGORITHM=${ALGORITHM:-centralized}
TAG=${TAG:-}
SUFFIX=${SUFFIX:-}
EXTRA=${EXTRA:-}
DIM=${DIM:-200}
EPOCHS=${EPOCHS:-30}
EVAL_EVERY=${EVAL_EVERY:-2}
THREADS=${THREADS:-2}
NICE=${NICE:-10}
PYTHON=${PYTHON:-python}
RESULTS=${RESULTS:-docs/results}
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$RUNS" "$RESULTS"

[ $# -gt 0 ] || { echo "usage: sh benchmarks/kge_fb15k237.sh NAME|NAME=RECIPE ..." >&2; exit 2; }

. benchmarks/series.sh

local_epochs=""
[ "$ALGORITHM" = centralized ] || local_epochs="--local-epochs 1"

train() {  # NAME RECIPE
    name="$TAG$1-d$DIM-e$EPOCHS$SUFFIX"
    # shellcheck disable=SC2086
    series_run "$name" kge-fb15k237- $PYTHON -m fedgraph.cli.main \
        train $DATA --algorithm $ALGORITHM --recipe "$2" --dim $DIM \
        --rounds $EPOCHS $local_epochs --eval-every $EVAL_EVERY --patience 0 \
        --seed 0 --threads $THREADS $EXTRA --quiet --out "$RUNS/$name" --resume
}

train_as_recipe() {  # NAME RECIPE: the recipe's own budget
    name="$TAG$1$SUFFIX"
    # shellcheck disable=SC2086
    series_run "$name" kge-fb15k237- $PYTHON -m fedgraph.cli.main \
        train $DATA --algorithm $ALGORITHM --recipe "$2" $local_epochs \
        --seed 0 --threads $THREADS $EXTRA --quiet --out "$RUNS/$name" --resume
}

failed=0
for item in "$@"; do
    case $item in
        complex-n3) train complex-n3 complex-n3-fb15k-237 ;;
        rotate) train rotate rotate-fb15k-237 ;;
        *-libkge) train_as_recipe "$item" "$item-fb15k-237" ;;
        *=*) train "${item%%=*}" "${item#*=}" ;;
        *) echo "unknown run $item (complex-n3, rotate, MODEL-libkge or NAME=RECIPE)" >&2; exit 2 ;;
    esac || failed=1
done
exit $failed
