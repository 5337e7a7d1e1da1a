# shellcheck shell=bash disable=SC2154
# Sourced by the ncu comparisons (plots/ncu_k3_rows.sh, plots/ncu_k3_pingpong.sh): a case set's shape
# and one profiled launch. The caller sets bin (ggemm), metrics (comma-separated) and kernels (ncu's
# -k regex).

shape() { # the columns tokens, experts, k, n, skews of a case set, as ggemm options
    awk -F, -v set="$1" '$1 == set {printf "--tokens %s --experts %s --k %s --n %s --skew %s", $2, $3, $4, $5, $6}' \
        "$(dirname "${BASH_SOURCE[0]}")/../harness/cases.csv"
}

one() { # label kernel options...: one launch from a flushed L2 (ncu's default), clocks as they are
    local label=$1 kernel=$2
    shift 2
    echo "== $label $kernel"
    ncu --clock-control none --metrics "$metrics" -k regex:"$kernels" --launch-count 1 \
        "$bin" run --kernel "$kernel" "$@" --reps 1 --warmup 0 --no-check 2>&1 | grep -F "${metrics//,/$'\n'}"
}
