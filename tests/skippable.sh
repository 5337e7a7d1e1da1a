#!/bin/sh
# usage: skippable.sh REPORT_DIR NAME COMMAND [ARGS...]
# Runs a test that may skip (exit 77: no GPU, no cuobjdump). When it skips, its last line (the
# reason) goes to REPORT_DIR/NAME.txt; CTest prints those lines after the summary
# (CTestCustom.cmake), so a skipped test's reason shows without -V.
dir=$1 name=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
rc=$?
cat "$log"
if [ "$rc" -eq 77 ]; then
    mkdir -p "$dir"
    tail -n 1 "$log" >"$dir/$name.txt"
fi
exit "$rc"
