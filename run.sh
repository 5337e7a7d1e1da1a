#!/usr/bin/env bash
# The main job: build everything; on a GPU run the worklog sweep (every stage this GPU can
# run, cuBLAS peers, torch._grouped_mm when torch is present) into results/<gpu>/sweep.csv;
# then regenerate every figure from results/. Without a GPU it says so and only redraws.
set -euo pipefail
cd "$(dirname "$0")"

cmake --preset release >/dev/null
cmake --build --preset release
bin=build/bin/ggemm

slug=
if name=$($bin device 2>/dev/null); then
    slug=$(echo "$name" | awk '{print tolower($NF)}')
    mkdir -p "results/$slug"
    csv="results/$slug/sweep.csv"
    export GG_COMMIT=${GG_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
    echo "== sweep on $name -> $csv"
    $bin sweep --out "$csv"
    rc=0
    python3 harness/peers/torch_grouped_mm.py --csv "$csv" || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
else
    echo "== no GPU here ($($bin device 2>&1 || true)): regenerating figures from results/"
fi

# README tables from this GPU's sweep (or the committed H200 one).
tables=results/${slug:-h200}/sweep.csv
[ -e "$tables" ] && python3 plots/tables.py "$tables"

# The layout and pipeline diagrams (matplotlib), from the code's own layout functions.
plots/diagrams.sh build

if ! command -v gnuplot >/dev/null; then
    echo "gnuplot not found: figures not regenerated (apt-get install gnuplot-nox)"
    exit 0
fi
# eta against skew, from the problem model alone.
eta=results/eta.dat
echo "# tokens skew eta_bm32 eta_bm64 eta_bm128 eta_adaptive" >"$eta"
for t in 16384 2048; do
    for s in 0 0.2 0.4 0.6 0.8 1.0 1.2 1.4 1.6 1.8 2.0; do
        row="$t $s"
        for bm in 32 64 128; do
            row="$row $($bin problem --tokens $t --skew $s --block-m $bm --format csv | awk -F, 'NR==2 {print $12}')"
        done
        row="$row $($bin problem --tokens $t --skew $s --format csv | awk -F, 'NR==2 {print $13}')"
        echo "$row" >>"$eta"
    done
done
gnuplot -e "dat='$eta'; out='results/eta.png'" plots/eta.gp
for csv in results/*/sweep.csv; do
    [ -e "$csv" ] || continue
    dir=$(dirname "$csv")
    device=$(sed -n 's/^# device=//p' "$csv" | head -1)
    python3 plots/pivot.py "$csv" "$dir/throughput.dat"
    gnuplot -e "dat='$dir/throughput.dat'; out='$dir/throughput.png'; device='$device'" plots/throughput.gp
    echo "== figure: $dir/throughput.png"
done
echo "== figure: results/eta.png"
