#!/usr/bin/env bash
# What the GPU runs for the traces (issue 12), from a build: ggemm trace of k2_tma_ws_s3 at 16384
# rows, s = 1.2; of k3_wgmma and k3_wgmma_coop_m64_n192 (step 3) at s = 0 and every k3_wgmma configuration at s = 1.2; and the
# traced twins' cost against the kernels on the worklog's four cases (16384 / 2048 rows, s = 0 /
# 1.2, K 1024, N 2688, 64 experts), gg_time's protocol with --reps. Writes two files into
# OUT_DIR: traces.tar.gz (one directory per trace, <kernel>_<rows>k_s<skew>/ with trace.csv,
# summary.csv and trace.json.gz, the Perfetto timeline, beside the CSV it is made from; and
# overhead.csv) and capture.log. Unpack traces.tar.gz into results/h200/traces/ (the figures and
# the k3 README's trace table read it there; its README says how to open a timeline).
# Usage: plots/trace_capture.sh BUILD_DIR OUT_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: plots/trace_capture.sh BUILD_DIR OUT_DIR" >&2; exit 2; }
bin=$1/bin/ggemm
[ -x "$bin" ] || { echo "trace_capture: $bin not built" >&2; exit 2; }
mkdir -p "$2"
out=$(cd "$2" && pwd) # absolute: the tar below runs in the work directory
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$out/capture.log
exec > >(tee "$log") 2>&1
"$bin" --version
"$bin" device

trace() { # trace NAME KERNEL TOKENS SKEW [ggemm options]
    local name=$1 kernel=$2 tokens=$3 skew=$4
    shift 4
    echo "== $name"
    "$bin" trace --kernel "$kernel" --tokens "$tokens" --skew "$skew" --out "$work/$name" "$@"
}
trace k2_tma_ws_s3_16k_s1.2 k2_tma_ws_s3 16384 1.2
trace k3_wgmma_16k_s0 k3_wgmma 16384 0
trace k3_wgmma_coop_m64_n192_16k_s0 k3_wgmma_coop_m64_n192 16384 0  # step 3, beside what the entry point runs
# Every registered k3_wgmma configuration (labs of that stage have no traced twin).
for k in $("$bin" list --format csv | awk -F, '$2 == "k3_wgmma" && $1 !~ /^lab_/ {print $1}'); do
    trace "${k}_16k_s1.2" "$k" 16384 1.2
done

# The cost of tracing: untraced and traced medians of the same kernel on one problem; only the
# summary rows are kept, one per kernel and case.
mkdir -p "$work/overhead"
for k in k3_wgmma k2_tma_ws_s3; do
    for tokens in 16384 2048; do
        for skew in 0 1.2; do
            trace "overhead/${k}_$((tokens / 1024))k_s$skew" "$k" "$tokens" "$skew" --reps 50
        done
    done
done
first=1
for f in "$work"/overhead/*/summary.csv; do
    if [ $first -eq 1 ]; then grep -v '^kernel,' "$f" | grep '^#'; grep '^kernel,' "$f"; first=0; fi
    grep -v '^#' "$f" | tail -n +2
done >"$work/overhead.csv"
rm -rf "$work"/overhead
# The JSON compressed where it lies (under a tenth of its size; Perfetto opens .json.gz as it is), -n so
# the same trace gives the same bytes: what `ggemm trace --from` makes of the CSV, which the CPU
# tests check for the committed ones.
gzip -9n "$work"/*/trace.json
(cd "$work" && tar -czf "$out/traces.tar.gz" .)
echo "== $out/traces.tar.gz: $(tar -tzf "$out/traces.tar.gz" | grep -c summary.csv) traces (trace.csv, summary.csv," \
    "trace.json.gz), overhead.csv"
ls -l "$out"
