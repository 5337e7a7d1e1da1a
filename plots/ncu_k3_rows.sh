#!/usr/bin/env bash
# DRAM bytes read by k3_wgmma with adaptive rows and with fixed rows at the same width, one launch
# each from a flushed L2 (ncu's default cache control), clocks left as they are: the evidence for
# the entry point's L2 test (k3_wgmma/k3_wgmma_entry.c, 1b). The real-shape cases come from
# harness/cases.csv, `16k_s1.2` is the worklog's skewed case. One text report.
# usage: plots/ncu_k3_rows.sh BUILD_DIR OUT_FILE
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: plots/ncu_k3_rows.sh BUILD_DIR OUT_FILE" >&2; exit 2; }
bin=$1/bin/ggemm out=$2
command -v ncu >/dev/null || { echo "skip: ncu not found (Nsight Compute)"; exit 77; }
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum
kernels='adaptive_kernel|persistent_kernel'
# shellcheck source=plots/ncu_lib.sh
. "$(dirname "$0")/ncu_lib.sh"
{
    for k in k3_wgmma_coop_m64_n256 k3_wgmma_coop_m128_n256; do
        for set in deepseek_v3 qwen3_30b_a3b olmoe; do
            # shellcheck disable=SC2046
            one "$set" "$k" $(shape "$set")
        done
        one 16k_s1.2 "$k" --skew 1.2
    done
    for k in k3_wgmma_coop_m64_n192 k3_wgmma_coop_m128_n192; do
        # shellcheck disable=SC2046
        one deepseek_v3 "$k" $(shape deepseek_v3)
        one 16k_s1.2 "$k" --skew 1.2
    done
} >"$out"
echo "ncu report: $out"
