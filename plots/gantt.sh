#!/usr/bin/env bash
# Redraws the per-SM Gantt charts into results/figures/ from committed traces (plots/gantt.py):
#   fig15-gantt-k3-s0.png    k3_wgmma,     16384 rows, s = 0     (TRACES/k3_wgmma_16k_s0)
#   fig16-gantt-k3-s1.2.png  k3_wgmma,     16384 rows, s = 1.2   (TRACES/k3_wgmma_16k_s1.2)
#   fig17-gantt-k2-s1.2.png  k2_tma_ws_s3, 16384 rows, s = 1.2   (TRACES/k2_tma_ws_s3_16k_s1.2)
#   fig21-gantt-k3-split64-s0.png  k3_wgmma_coop_m64_n192 (step 3), 16384 rows, s = 0
#                                  (TRACES/k3_wgmma_coop_m64_n192_16k_s0, or as captured before the
#                                  renaming, TRACES/k3_wgmma_split64_16k_s0: a LIST entry's DIR may
#                                  name several folders, NEW|OLD, the first that holds a trace drawn)
# Usage: plots/gantt.sh [TRACES]  (default results/h200/traces, written by plots/trace_capture.sh).
# One line and exit 0 when the traces or matplotlib are missing (as plots/diagrams.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
traces=${1:-$root/results/h200/traces}
py=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "== skip: matplotlib not found: Gantt charts not redrawn (apt-get install python3-matplotlib)"; exit 0; }
mkdir -p "$root/results/figures"
while read -r fig dirs title; do
    dir=${dirs%%|*}
    for d in ${dirs//|/ }; do
        if [ -e "$traces/$d/trace.csv" ]; then dir=$d; break; fi
    done
    if [ ! -e "$traces/$dir/trace.csv" ]; then
        echo "== skip: no $traces/$dir/trace.csv: $fig not redrawn (plots/trace_capture.sh on the GPU)"
        continue
    fi
    "$py" "$root/plots/gantt.py" "$traces/$dir" "$root/results/figures/$fig" "$title"
    echo "== figure: results/figures/$fig"
done <<'LIST'
fig15-gantt-k3-s0.png k3_wgmma_16k_s0 k3_wgmma, 16384 rows, 64 experts, s = 0 (K 1024, N 2688)
fig16-gantt-k3-s1.2.png k3_wgmma_16k_s1.2 k3_wgmma, 16384 rows, 64 experts, s = 1.2 (K 1024, N 2688)
fig21-gantt-k3-split64-s0.png k3_wgmma_coop_m64_n192_16k_s0|k3_wgmma_split64_16k_s0 k3_wgmma_coop_m64_n192 (step 3), 16384 rows, 64 experts, s = 0 (K 1024, N 2688)
fig17-gantt-k2-s1.2.png k2_tma_ws_s3_16k_s1.2 k2_tma_ws_s3, 16384 rows, 64 experts, s = 1.2 (K 1024, N 2688)
LIST
