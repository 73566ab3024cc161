# Shared by the series scripts that run named, resumable runs one at a time
# (kge_fb15k237.sh, fedmkgc_reduced.sh); sourced, not run. They set RUNS (the
# runs' folder), RESULTS (where finished results go), NICE and PYTHON.
#
#   series_run NAME PREFIX COMMAND...   runs COMMAND (its --out is RUNS/NAME)
#                                       unless RUNS/NAME/results.json exists,
#                                       under flock RUNS/NAME.lock and nice
#                                       NICE, output appended to RUNS/NAME.log
#                                       and the command to RUNS/commands.txt;
#                                       a finished run's results.json goes to
#                                       RESULTS/PREFIXNAME.json
#
# Edit this file only by writing a new copy and renaming it over the old one:
# sh reads a script as it runs it.

series_publish() {  # NAME PREFIX: RUNS/NAME/results.json without this machine's paths
    target="$RESULTS/$2$1.json"
    "$PYTHON" scripts/scrub_results.py "$RUNS/$1/results.json" "$target" &&
        echo "$(date -u +%FT%TZ) $1: results copied to $target"
}

series_run() {  # NAME PREFIX COMMAND...
    name=$1 prefix=$2
    shift 2
    if [ -f "$RUNS/$name/results.json" ]; then
        echo "$(date -u +%FT%TZ) $name: finished ($RUNS/$name/results.json)"
        series_publish "$name" "$prefix"
        return 0
    fi
    echo "$(date -u +%FT%TZ) $*" >> "$RUNS/commands.txt"
    echo "$(date -u +%FT%TZ) $name: start"
    flock "$RUNS/$name.lock" nice -n "$NICE" "$@" >> "$RUNS/$name.log" 2>&1
    status=$?
    echo "$(date -u +%FT%TZ) $name: exit $status"
    [ "$status" = 0 ] && [ -f "$RUNS/$name/results.json" ] &&
        series_publish "$name" "$prefix"
    return $status
}
