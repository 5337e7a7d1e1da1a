#!/usr/bin/env bash
# Redraws the data figures (gnuplot) into results/figures/ from the committed results only:
# results/h200/sweep.csv, results/h200/ncu/*.csv, results/h200/kernels.csv and `ggemm problem`
# (the model's η and compulsory bytes). plots/figdata.py writes the tables the scripts read.
# Usage: plots/figures.sh BUILD_DIR [RESULTS_DIR]  (RESULTS_DIR defaults to results/h200).
# Figures: fig01-stage-progression.png, fig03-tile-quantization.png, fig07-bm-resources.png,
# fig08-warp-stalls.png, fig11-eta-vs-skew-loss.png, fig14-roofline.png, fig22-k3-walks.png (each
# by plots/<name>.gp; the last from two traces: results/h200/traces and results/h200/evidence);
# from RESULTS_DIR/moe.csv (k4_moe's layer and the torch_moe and liger_moe peers, read by the scripts directly),
# fig18-moe-steps.png and fig19-moe-speedup.png, each skipped with one line when its rows are missing
# (fig18 also for each other GPU's page: fig18-moe-steps-<gpu>.png);
# from RESULTS_DIR/backward.csv (k5_backward and torch._grouped_mm's backward forms) and sweep.csv,
# fig24-wgrad-skew.png, skipped with one line ("no data yet") until a GPU run has written it.
# Skips with one line (exit 0) when gnuplot or python3 is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: plots/figures.sh BUILD_DIR [RESULTS_DIR]" >&2; exit 2; }
build=$1
res=${2:-$root/results/h200}
[ -x "$build/bin/ggemm" ] || { echo "figures: $build/bin/ggemm not built" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "== skip: gnuplot not found: data figures not redrawn (apt-get install gnuplot-nox)"; exit 0; }
command -v python3 >/dev/null || { echo "== skip: python3 not found: data figures not redrawn (apt-get install python3)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/plots/figdata.py" data "$tmp" --sweep "$res/sweep.csv" --ncu "$res/ncu" \
    --kernels "$res/kernels.csv" --ggemm "$build/bin/ggemm"
mkdir -p "$root/results/figures"
for name in fig01-stage-progression fig03-tile-quantization fig07-bm-resources fig08-warp-stalls \
    fig11-eta-vs-skew-loss fig14-roofline fig22-k3-walks; do
    gnuplot -e "dir='$tmp'; out='$root/results/figures/$name.png'" "$root/plots/$name.gp"
    echo "== figure: results/figures/$name.png"
done
# The MoE layer (k4_moe): one line instead of the figure when the run did not write its rows.
moe=$res/moe.csv
if [ -e "$moe" ]; then
    gnuplot -e "csv='$moe'; out='$root/results/figures/fig18-moe-steps.png'" "$root/plots/fig18-moe-steps.gp"
    echo "== figure: results/figures/fig18-moe-steps.png"
    if grep -q '^torch_moe,' "$moe"; then
        gnuplot -e "csv='$moe'; out='$root/results/figures/fig19-moe-speedup.png'" "$root/plots/fig19-moe-speedup.gp"
        echo "== figure: results/figures/fig19-moe-speedup.png"
    else
        echo "== skip: no torch_moe rows in ${moe#"$root"/}: fig19-moe-speedup not redrawn (pip install torch, then ./run.sh on a GPU)"
    fi
else
    echo "== skip: no ${moe#"$root"/}: fig18-moe-steps and fig19-moe-speedup not redrawn (./run.sh on a GPU writes it)"
fi
# The same per-step figure for each other GPU's page (results/<gpu>/ with its own moe.csv and
# README.md), drawn beside the reference one as fig18-moe-steps-<gpu>.png.
for other in "$root"/results/*/; do
    other=${other%/}
    [ "$other" != "$res" ] && [ -e "$other/moe.csv" ] && [ -e "$other/README.md" ] || continue
    name=fig18-moe-steps-$(basename "$other").png
    gnuplot -e "csv='$other/moe.csv'; out='$root/results/figures/$name'" "$root/plots/fig18-moe-steps.gp"
    echo "== figure: results/figures/$name"
done
# The backward's skew sweep (k5_backward), beside figure 11: only from measured rows.
backward=$res/backward.csv
if [ -e "$backward" ] && grep -q '^k5_wgrad,' "$backward"; then
    gnuplot -e "csv='$backward'; fwd='$res/sweep.csv'; out='$root/results/figures/fig24-wgrad-skew.png'" \
        "$root/plots/fig24-wgrad-skew.gp"
    echo "== figure: results/figures/fig24-wgrad-skew.png"
else
    echo "== skip: no data yet: no k5_wgrad rows in ${backward#"$root"/}: fig24-wgrad-skew not drawn (./run.sh on a GPU writes them)"
fi
