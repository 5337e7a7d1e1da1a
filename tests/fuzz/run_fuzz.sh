#!/bin/sh
# usage: run_fuzz.sh FUZZER SECONDS SEED_CORPUS WORK_DIR [README]
# Runs a libFuzzer target for SECONDS from the committed seed corpus (new inputs go to WORK_DIR,
# never into the repository). FUZZER "none:REASON" = the build could not make it: skip (77),
# or fail in CI (CI=true). With README, the run's count is written between its
# <!-- fuzz:begin/end --> markers (plots/tables.py style: "updated" / "unchanged").
fuzzer=$1 seconds=$2 seeds=$3 work=$4 readme=${5:-}
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
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
echo "fuzz_cli: $runs inputs in $seconds s, no crash"
[ -n "$readme" ] || exit 0
line="$runs inputs in $seconds s from the seed corpus, no crash, no sanitizer report ($(clang --version | head -1), commit $(git -C "$(dirname "$0")" rev-parse --short=12 HEAD), $(date -u +%Y-%m-%d))."
tmp=$(mktemp)
awk -v line="$line" '/<!-- fuzz:end -->/ {print line; skip=0} !skip {print} /<!-- fuzz:begin -->/ {skip=1}' "$readme" >"$tmp"
if cmp -s "$tmp" "$readme"; then echo "unchanged: $readme"; rm -f "$tmp"; else mv "$tmp" "$readme"; echo "updated: $readme"; fi
