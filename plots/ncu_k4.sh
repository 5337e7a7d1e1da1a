#!/usr/bin/env bash
# ncu on the two GEMM1 kernels of the MoE layer (k4_moe), Mixtral-shaped (d 4096, F 14336, 8 experts,
# top-2) at T = 4096: the fused k4_gemm1_swiglu (gathering producer, SwiGLU epilogue) and, on the
# unfused path, k3_wgmma's GEMM1 on the gathered X (the first k3 launch of a forward since the
# router has a kernel of its own, k4_router; the second is GEMM2). Same sections for both, clocks
# left as they are; one text report each.
# usage: plots/ncu_k4.sh BUILD_DIR OUT_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: plots/ncu_k4.sh BUILD_DIR OUT_DIR" >&2; exit 2; }
bin=$1/bin/ggemm out=$2
command -v ncu >/dev/null || { echo "skip: ncu not found (Nsight Compute)"; exit 77; }
mkdir -p "$out"
layer=(moe --model mixtral --tokens 4096 --reps 1 --warmup 0 --no-check)
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
          --section WarpStateStats --section SchedulerStats --section InstructionStats)
ncu --clock-control none -k regex:gemm1_swiglu --launch-count 1 "${sections[@]}" \
    "$bin" "${layer[@]}" --fused >"$out/ncu_k4_gemm1_fused.txt"
ncu --clock-control none -k regex:'adaptive_kernel|persistent_kernel|pingpong_kernel' --launch-count 1 "${sections[@]}" \
    "$bin" "${layer[@]}" --unfused >"$out/ncu_k4_gemm1_unfused_k3.txt"
echo "ncu reports in $out"
