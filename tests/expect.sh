#!/bin/sh
# usage: expect.sh CODES REGEX COMMAND [ARGS...]
# Runs COMMAND. Its exit code must be one of CODES (comma-separated). For a code other than 0
# and 1 (bad usage, no GPU) stderr must be exactly one line. A non-empty REGEX (grep -E) must
# match what the command printed (stdout and stderr).
codes=$1 regex=$2
shift 2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
cat "$out" "$err"
case ",$codes," in *",$rc,"*) ;; *) echo "expect.sh: expected exit code $codes, got $rc"; exit 1 ;; esac
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$(wc -l <"$err")" -ne 1 ]; then
    echo "expect.sh: expected exactly one line on stderr"
    exit 1
fi
if [ -n "$regex" ] && ! cat "$out" "$err" | grep -Eq -- "$regex"; then
    echo "expect.sh: output does not match '$regex'"
    exit 1
fi
exit 0
