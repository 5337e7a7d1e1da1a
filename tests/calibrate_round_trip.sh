#!/bin/sh
# usage: calibrate_round_trip.sh GGEMM CALIBRATION
# Fits CALIBRATION's measured times again (ggemm calibrate --from, no GPU) into a temporary file,
# then, without a GPU, asks the entry point for its choice on a few shapes with each file: the
# choices must be the same and the predicted times within 0.1% (a file fit by an older version of
# the fit lands a few hundredths of a microsecond away). Then fits the copy again in place
# (--from F --out F), which must leave a file that loads.
ggemm=$1 cal=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ggemm" calibrate --from "$cal" --out "$dir/c.csv" 2>"$dir/err" || { cat "$dir/err"; exit 1; }
for shape in "16384 64 1024 2688" "16384 128 1024 2688" "2048 64 1024 2688" "32768 128 4096 3072" \
             "256 64 1024 2688" "65536 256 7168 4096" "8192 8 4096 14336"; do
    set -- $shape
    for f in "$cal" "$dir/c.csv"; do
        CUDA_VISIBLE_DEVICES= GG_CALIBRATION=$f "$ggemm" problem --tokens "$1" --experts "$2" --k "$3" --n "$4" |
            grep -o 'would run [a-z0-9_]*: predicted [0-9.]* us' >"$dir/pick.$(basename "$f")"
    done
    if ! [ -s "$dir/pick.c.csv" ] || ! paste -d' ' "$dir/pick.$(basename "$cal")" "$dir/pick.c.csv" |
        awk '{ d = $5 - $11; if (d < 0) d = -d; if ($3 != $9 || d > 0.001 * $5) exit 1 }'; then
        echo "calibrate_round_trip: $shape: $(cat "$dir/pick.$(basename "$cal")") / refit: $(cat "$dir/pick.c.csv")"
        exit 1
    fi
done
"$ggemm" calibrate --from "$dir/c.csv" --out "$dir/c.csv" 2>"$dir/err" || { cat "$dir/err"; exit 1; }
CUDA_VISIBLE_DEVICES= GG_CALIBRATION=$dir/c.csv "$ggemm" problem | grep -q "calibration: $dir/c.csv" ||
    { echo "calibrate_round_trip: the file fit in place does not load"; exit 1; }
echo "calibrate_round_trip: same choices from $cal and its refit"
