#!/usr/bin/env bash
# The main job: build everything; on a GPU calibrate k3_wgmma's cost model, run the sweep (every case set of harness/cases.csv:
# every stage this GPU can run, cuBLAS peers, torch._grouped_mm when PyTorch is present) into
# results/<gpu>/sweep.csv, the backward's sets (k5_backward's dgrad and wgrad, torch._grouped_mm's
# backward forms) into results/<gpu>/backward.csv (the same columns), record the kernels' resources,
# run the MoE layer (k4_moe, and eager PyTorch and Liger-Kernel's fused MoE when present) into
# results/<gpu>/moe.csv, rewrite the README tables, and redraw the figures. Needs only the CUDA
# toolkit, CMake and a C/C++ compiler; each optional part that is missing is skipped with one line
# naming the package that brings it.
set -euo pipefail
cd "$(dirname "$0")"
skip() { echo "== skip: $*"; }

# NOTICE-level messages (tests not configured: no Check) still show; the rest of configure does not.
# The main job also builds and sweeps k3's ablations (k3_wgmma/TRIALS.md reads their rows); the
# test preset sets GG_ABLATIONS back to OFF, so the test command never builds them.
cmake --preset release -DGG_ABLATIONS=ON --log-level=NOTICE >/dev/null
# The build log (with ptxas's resource report for every kernel) goes to a file; on failure its tail shows.
cmake --build --preset release >build/build.log 2>&1 || { tail -n 40 build/build.log; exit 1; }
echo "== built (log: build/build.log)"
bin=build/bin/ggemm
export GG_COMMIT=${GG_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}

have_python=0
command -v python3 >/dev/null && have_python=1
# Triton's compiled kernels (Liger's autotuner compiles ~100 configurations per model and pass on
# first use: k4_moe/README.md, "The peers") kept in the repository, git-ignored, for the next run.
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$PWD/.triton-cache}
# A PyTorch peer (harness/peers/SCRIPT.py): `ggemm ARGS...` lists its cases, it appends its rows to
# CSV. Exit 77 (no GPU, no torch._grouped_mm, no liger_kernel) is a skip, with the script's one
# line; without torch, one line here. Any other non-zero exit (1: a case failed its check or ended
# in an error) is noted in failed_peers and the job goes on: the rows it did write stay, the
# tables and figures are still made, and the job exits 1 at the end naming the peer.
failed_peers=
peer() {
    local script=$1 out=$2 cases rc=0
    shift 2
    if [ $have_python -eq 1 ] && python3 -c 'import torch' 2>/dev/null; then
        cases=$(mktemp)
        $bin "$@" >"$cases"
        python3 "harness/peers/$script.py" --csv "$out" --cases "$cases" ${PEER_ARGS:-} || rc=$?
        rm -f "$cases"
        if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
            echo "== peer $script${PEER_ARGS:+ $PEER_ARGS} -> $out: exit $rc (its lines above say which cases)"
            failed_peers="$failed_peers${failed_peers:+, }$script${PEER_ARGS:+ $PEER_ARGS} ($out, exit $rc)"
        fi
    else
        skip "PyTorch not found: the $script peer is not run (pip install torch)"
    fi
}
slug=
if name=$($bin device 2>/dev/null); then
    # results/<gpu>: the board's name in lower case without "NVIDIA", runs of other characters as
    # one '-' (NVIDIA H200 -> h200, NVIDIA H100 80GB HBM3 -> h100-80gb-hbm3): two boards of one
    # chip (SXM, PCIe) keep apart, as their clocks and power limits do.
    slug=$(echo "$name" | tr '[:upper:]' '[:lower:]' | sed 's/^nvidia //; s/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//')
    mkdir -p "results/$slug"
    csv="results/$slug/sweep.csv"
    # k3_wgmma's entry point chooses with constants measured on this GPU (k3_wgmma/README.md).
    echo "== calibrate k3_wgmma's cost model -> results/$slug/calibration.csv"
    # exit 77: k3_wgmma cannot run on this GPU (not sm_90a); the sweep still runs what can.
    rc=0
    $bin calibrate --out "results/$slug/calibration.csv" || rc=$?
    if [ $rc -eq 0 ]; then export GG_CALIBRATION="results/$slug/calibration.csv"
    elif [ $rc -eq 77 ]; then skip "k3_wgmma does not run on this GPU: no calibration"
    else exit $rc; fi
    echo "== sweep on $name -> $csv"
    $bin sweep --pass forward --out "$csv"
    $bin list --format csv >"results/$slug/kernels.csv"
    echo "== resources -> results/$slug/kernels.csv"
    peer torch_grouped_mm "$csv" cases --pass forward --kernels torch_grouped_mm --format csv
    # k5_backward: dgrad (its entry point and the configurations it chooses among) and wgrad (and its twins),
    # and torch._grouped_mm's dgrad and 2D x 2D wgrad forms, in one run.
    backward="results/$slug/backward.csv"
    echo "== backward sweep on $name -> $backward"
    $bin sweep --pass backward --out "$backward"
    peer torch_grouped_mm "$backward" cases --pass backward --kernels torch_grouped_mm_dgrad,torch_grouped_mm_wgrad --format csv
    # k4_moe: the whole MoE FFN layer (route, permute, GEMM1, GEMM2, combine) per model and token
    # count, fused and unfused, then the same cases in eager PyTorch and in Liger-Kernel's fused MoE.
    moe="results/$slug/moe.csv"
    moe_tokens=256,4096,16384
    echo "== moe layer on $name -> $moe"
    $bin moe --model all --tokens $moe_tokens --out "$moe"
    peer torch_moe "$moe" moe --model all --tokens $moe_tokens --list
    peer liger_moe "$moe" moe --model all --tokens $moe_tokens --list
    # The layer's backward (k5_backward, on the unfused forward's state) at T = 4096 on the layers of
    # its target, beside torch autograd and Liger's backward: rows with pass = backward (and the
    # forward rows each case checks first) in their own file, so moe.csv keeps one row per case.
    moe_bwd="results/$slug/moe_backward.csv"
    echo "== moe layer backward on $name -> $moe_bwd"
    bwd_models=mixtral,qwen3,olmoe
    $bin moe --model $bwd_models --tokens 4096 --backward --unfused --out "$moe_bwd"
    PEER_ARGS=--backward peer torch_moe "$moe_bwd" moe --model $bwd_models --tokens 4096 --backward --list
    PEER_ARGS=--backward peer liger_moe "$moe_bwd" moe --model $bwd_models --tokens 4096 --backward --list
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
# k3_wgmma's entry point on the validation grid: the model's picks against the measured configurations.
python3 plots/k3_grid.py --ggemm "$bin"
# The stage READMEs' exercises and labs/README.md's table: answers measured on the H200.
[ -d results/h200 ] && python3 plots/exercises.py
rc=0
python3 plots/sass_tables.py --kernels-csv "results/${slug:-h200}/kernels.csv" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc

# Figure captions (their numbers) and k0's profile table, from the committed sweep and ncu data.
python3 plots/figdata.py captions --ggemm "$bin"

# Data figures (gnuplot) from the committed results; one line when gnuplot is missing.
plots/figures.sh build

# Diagrams (matplotlib), from the code's own layout functions; one line when matplotlib is missing.
plots/diagrams.sh build

# The traces (plots/trace_capture.sh on the GPU, committed under results/h200/traces/): per-SM
# Gantt charts and k3_wgmma's trace table; one line each for what is missing.
plots/gantt.sh
python3 plots/traces.py

if [ -n "$failed_peers" ]; then
    echo "== FAILED peers: $failed_peers"
    exit 1
fi
