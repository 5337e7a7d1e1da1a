#!/bin/sh
# usage: labs/grade_evidence.sh BUILD_DIR OUT_DIR      (on a GPU that runs every lab: an H200)
# The GPU half of the labs' tests: each starter as shipped must fail `ggemm grade` (exit 1), and
# the same file with its stage's own code in the gaps (make_starters.py --solved, which CMake
# builds as NAME_solved with -DGG_LABS_SOLVED=ON) must pass it (exit 0). BUILD_DIR is an existing
# build of this tree (only the four solved labs and the link are added; the option is set back
# to OFF at the end). OUT_DIR gets summary.txt and grade_evidence.tar.gz (every card, the build
# log, `ggemm list`). Exit 0 when all eight grades come out as they must.
set -u
if [ $# -ne 2 ]; then
    echo "usage: labs/grade_evidence.sh BUILD_DIR OUT_DIR" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1 out=$2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
if ! { cmake -S "$root" -B "$build" -DGG_LABS_SOLVED=ON && cmake --build "$build" --target ggemm -j; } >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log"
    echo "grade_evidence.sh: building the solved labs failed" >&2
    exit 1
fi
ggemm=$build/bin/ggemm
{
    "$ggemm" --version
    "$ggemm" list
} >"$work/list.txt" 2>&1
status=0
for lab in lab_k0_tiles lab_k1_fragments lab_k2_ring lab_k3_wgmma; do
    for name in "$lab" "${lab}_solved"; do
        want=1
        [ "$name" = "$lab" ] || want=0
        timeout 300 "$ggemm" grade --kernel "$name" --reps 10 --warmup 2 >"$work/$name.txt" 2>&1
        rc=$?
        verdict=as-expected
        [ "$rc" -eq "$want" ] || { verdict=UNEXPECTED; status=1; }
        card=$(grep -o 'correct on [0-9]* of [0-9]* shapes' "$work/$name.txt" || echo "no card: $(tail -n 1 "$work/$name.txt")")
        line="$name: ggemm grade exit $rc (must be $want): $verdict; $card"
        echo "$line" | tee -a "$work/summary.txt"
    done
done
echo "$(($(date +%s) - start)) s in all, commit ${GG_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD)}" | tee -a "$work/summary.txt"
cmake -S "$root" -B "$build" -DGG_LABS_SOLVED=OFF >/dev/null 2>&1
cp "$work/summary.txt" "$out/summary.txt"
tar -czf "$out/grade_evidence.tar.gz" -C "$work" .
exit $status
