#!/usr/bin/env bash
# Ping-pong consumers against consumers that share each tile, at the same width and row policy:
# kernel time, tensor-pipe activity and DRAM bytes read, one launch each from a flushed L2 (ncu's
# default cache control), clocks left as they are. The evidence for the entry point's third step
# (k3_wgmma/k3_wgmma_entry.c): ping-pong hides the epilogue under the other consumer's MMAs, so
# the tensor pipe should be busier for the same bytes; DRAM and L2 throughput (% of their peaks)
# say how close the feed is to its limits. One text report.
# usage: plots/ncu_k3_pingpong.sh BUILD_DIR OUT_FILE
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: plots/ncu_k3_pingpong.sh BUILD_DIR OUT_FILE" >&2; exit 2; }
bin=$1/bin/ggemm out=$2
command -v ncu >/dev/null || { echo "skip: ncu not found (Nsight Compute)"; exit 77; }
metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics=$metrics,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,lts__throughput.avg.pct_of_peak_sustained_elapsed
kernels='adaptive_kernel|persistent_kernel|pingpong_kernel'
# shellcheck source=plots/ncu_lib.sh
. "$(dirname "$0")/ncu_lib.sh"
{
    for k in k3_wgmma_coop_m64_n192 k3_wgmma_pingpong_m64_n192; do
        one 16k_s0 "$k"
        one 16k_s1.2 "$k" --skew 1.2
    done
    for k in k3_wgmma_coop_m128_n192 k3_wgmma_pingpong_m128_n192; do
        one 16k_s0_k8192 "$k" --k 8192
        for set in qwen3_30b_a3b mixtral; do
            # shellcheck disable=SC2046
            one "$set" "$k" $(shape "$set")
        done
    done
} >"$out"
echo "ncu report: $out"
