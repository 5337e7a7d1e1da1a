#!/bin/sh
# usage: tests/sanitize.sh BUILD_DIR [KERNEL...]   (GPU, compute-sanitizer)
# Runs every registered kernel this GPU can run (or the ones named) under compute-sanitizer's
# memcheck, racecheck and synccheck on one ragged problem: empty experts, a 1-row expert, row
# counts on both sides of 64 and 128, and N that leaves a partial column tile for every
# BLOCK_N. Prints one "== KERNEL TOOL" header per run and the tool's summary; exits 1 if any
# run reports an error or hazard or fails its check.
bin=$1/bin/ggemm
shift
command -v compute-sanitizer >/dev/null || { echo "skip: compute-sanitizer not found"; exit 77; }
kernels=${*:-$("$bin" list --format csv | awk -F, 'NR > 1 && $4 != "" && $17 == "ok" {print $1}')}
status=0
for k in $kernels; do
    for tool in memcheck racecheck synccheck; do
        echo "== $k $tool"
        out=$(compute-sanitizer --tool $tool --error-exitcode 9 "$bin" run --kernel "$k" \
              --m-list 0,1,130,0,64,257,3,200,127,65 --k 256 --n 392 --reps 1 --warmup 0 2>&1)
        rc=$?
        printf '%s\n' "$out" | grep -E "check:|SUMMARY|ggemm:" | grep -v "^ggemm: $k, tokens"
        case $rc in 0) ;; 2) echo "(refused by can_implement)" ;; *) status=1 ;; esac
    done
done
exit $status
