#!/bin/sh
# usage: run_fuzz.sh FUZZER SECONDS SEED_CORPUS WORK_DIR [README]
# Runs a libFuzzer target for SECONDS from the committed seed corpus (new inputs go to WORK_DIR,
# never into the repository). FUZZER "none:REASON" = the build could not make it: skip (77),
# or fail in CI (CI=true). With README, the count of inputs tried (from libFuzzer's final
# stats in WORK_DIR/last.log) is written between its <!-- fuzz:begin/end --> markers.
fuzzer=$1 seconds=$2 seeds=$3 work=$4 readme=${5:-}

record() { # the run's count, from its log, into README's fuzz block
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_cli: $runs inputs in $seconds s, no crash"
    [ -n "$readme" ] || return 0
    line="$runs inputs in $seconds s from the seed corpus, no crash, no sanitizer report ($(clang --version | head -1), commit $(git -C "$(dirname "$0")" rev-parse --short=12 HEAD), $(date -u +%Y-%m-%d))."
    tmp=$(mktemp)
    # the line takes the end marker's indentation (the block sits in a list item)
    awk -v line="$line" '/<!-- fuzz:end -->/ {match($0, /^ */); print substr($0, 1, RLENGTH) line; skip=0}
         !skip {print} /<!-- fuzz:begin -->/ {skip=1}' "$readme" >"$tmp"
    if cmp -s "$tmp" "$readme"; then echo "unchanged: $readme"; rm -f "$tmp"; else mv "$tmp" "$readme"; echo "updated: $readme"; fi
}

case $fuzzer in none:*)
    reason=${fuzzer#none:}
    if [ "${CI:-}" = "true" ]; then echo "FAIL: $reason (CI must run the fuzz test: see the README's install line)"; exit 1; fi
    echo "skip: $reason"; exit 77 ;;
esac
mkdir -p "$work"
log=$work/last.log
"$fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -dict="$(dirname "$0")/cli.dict" -print_final_stats=1 "$work" "$seeds" >"$log" 2>&1
rc=$?
tail -n 25 "$log"
[ $rc -eq 0 ] || { echo "fuzz_cli failed (exit $rc): the crashing input is named above (crash-*)"; exit 1; }
record
