#!/usr/bin/env bash
# The main job: build everything; on a GPU run the sweep (every case set of harness/cases.csv:
# every stage this GPU can run, cuBLAS peers, torch._grouped_mm when PyTorch is present) into
# results/<gpu>/sweep.csv, record the kernels' resources, rewrite the README tables, and redraw
# the figures. Needs only the CUDA toolkit, CMake and a C/C++ compiler; each optional part that
# is missing is skipped with one line naming the package that brings it.
set -euo pipefail
cd "$(dirname "$0")"
skip() { echo "== skip: $*"; }

# NOTICE-level messages (tests not configured: no Check) still show; the rest of configure does not.
cmake --preset release --log-level=NOTICE >/dev/null
cmake --build --preset release
bin=build/bin/ggemm
export GG_COMMIT=${GG_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}

have_python=0
command -v python3 >/dev/null && have_python=1
slug=
if name=$($bin device 2>/dev/null); then
    slug=$(echo "$name" | awk '{print tolower($NF)}')
    mkdir -p "results/$slug"
    csv="results/$slug/sweep.csv"
    echo "== sweep on $name -> $csv"
    $bin sweep --out "$csv"
    $bin list --format csv >"results/$slug/kernels.csv"
    echo "== resources -> results/$slug/kernels.csv"
    if [ $have_python -eq 1 ] && python3 -c 'import torch' 2>/dev/null; then
        cases=$(mktemp)
        $bin cases --kernels torch_grouped_mm --format csv >"$cases"
        rc=0
        python3 harness/peers/torch_grouped_mm.py --csv "$csv" --cases "$cases" || rc=$?
        rm -f "$cases"
        [ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
    else
        skip "PyTorch not found: the torch_grouped_mm peer is not run (pip install torch)"
    fi
else
    echo "== no GPU here ($($bin device 2>&1 || true)): tables and figures from the committed results/"
fi

if [ $have_python -eq 0 ]; then
    skip "python3 not found: README tables and figures not regenerated (apt-get install python3)"
    exit 0
fi
# README tables from this GPU's sweep (or the committed H200 one), and the SASS/resource tables.
tables=results/${slug:-h200}/sweep.csv
[ -e "$tables" ] && python3 plots/tables.py "$tables"
# The stage READMEs' exercises and labs/README.md's table: answers measured on the H200.
[ -d results/h200 ] && python3 plots/exercises.py
rc=0
python3 plots/sass_tables.py --kernels-csv "results/${slug:-h200}/kernels.csv" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc

# Data figures (gnuplot).
if ! command -v gnuplot >/dev/null; then
    skip "gnuplot not found: data figures not redrawn (apt-get install gnuplot-nox)"
else
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
    echo "== figure: results/eta.png"
    for csv in results/*/sweep.csv; do
        [ -e "$csv" ] || continue
        dir=$(dirname "$csv")
        device=$(sed -n 's/^# device=//p' "$csv" | head -1)
        python3 plots/pivot.py "$csv" "$dir/throughput.dat"
        gnuplot -e "dat='$dir/throughput.dat'; out='$dir/throughput.png'; device='$device'" plots/throughput.gp
        echo "== figure: $dir/throughput.png"
    done
fi

# Diagrams (matplotlib), from the code's own layout functions; one line when matplotlib is missing.
plots/diagrams.sh build
