#!/usr/bin/env bash
# Capture the ncu data behind figures 7 and 8 and the k0 limiter (GPU, ncu with counter access).
# usage: plots/ncu_capture.sh BUILD_DIR OUT_DIR [KERNEL...]
# For each configuration: one checked `ggemm run` at the worklog's 16k, s = 0 case; ncu profiles
# the kernel's first launch (the kernels are the only functions named k0_/k1_/k2_/k3_) and writes
# its raw metrics as CSV (OUT_DIR/<kernel>.csv). Clocks are left as they are (--clock-control none).
# Metrics, by question:
#   resources and occupancy: registers per thread, shared memory per block, the occupancy limiters,
#     achieved warps per cycle;
#   issue: instructions executed (per SM sub-partition, summed), issue-active %, IPC;
#   pipes: FMA, tensor, LSU shared-memory wavefronts, L1 and DRAM throughput (on sm_90 the
#     hmma tensor-pipe counter also counts wgmma: k3, which issues no HMMA, keeps it busy; ncu
#     13.0 has no separate gmma counter by the name sm__pipe_tensor_op_gmma_*, and drops it);
#   stalls: every smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio (cycles a
#     warp spends stalled for <reason>, per issued instruction): the Warp State section's numbers.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: plots/ncu_capture.sh BUILD_DIR OUT_DIR [KERNEL...]" >&2; exit 2; }
bin=$1/bin/ggemm out=$2
shift 2
kernels=${*:-k0_fma k1_mmasync_bm128 k1_mmasync_bm64 k1_mmasync_bm32 k1_mmasync_bm64_fragdb k2_tma_ws_s2 k2_tma_ws_s3 k3_wgmma}
command -v ncu >/dev/null || { echo "skip: ncu not found (Nsight Compute)"; exit 77; }
metrics=launch__registers_per_thread,launch__block_size,launch__grid_size
metrics+=,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
metrics+=,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps
metrics+=,launch__occupancy_limit_blocks,sm__warps_active.avg.per_cycle_active,sm__cycles_elapsed.avg
metrics+=,gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed.avg.per_cycle_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
metrics+=,l1tex__throughput.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
mkdir -p "$out"
for k in $kernels; do
    echo "== ncu: $k" >&2
    ncu --clock-control none --kernel-name regex:'^k[0-3]_' --launch-count 1 --csv --page raw \
        --log-file "$out/$k.csv" --metrics "$metrics" "$bin" run --kernel "$k" --tokens 16384 --skew 0 --reps 1 --warmup 0
done
