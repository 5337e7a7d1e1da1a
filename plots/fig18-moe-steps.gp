# Figure 18: where the MoE layer's time goes. Per model (columns) and token count (rows), one stacked
# bar per implementation: k4_moe fused, k4_moe unfused, Liger-Kernel's fused MoE (liger_moe, on
# the torch router's routing), torch_moe eager; an implementation with no row in the CSV has no
# bar and no slot. The segments are the per-step medians (route, permute, GEMM1, GEMM2, combine,
# each timed between CUDA events in reps of their own), the black tick the whole layer's median
# (timed without the events) with its p10-p90 whisker right of the bar, the dashed line the layer's
# roofline floor; where the CSV has each step's p10 and p90, a thin whisker at each segment's top. Each panel has its own
# y range: Mixtral's layer is ~10x the others.
# Data: results/<gpu>/moe.csv as written (ggemm moe, then harness/peers/torch_moe.py and
# liger_moe.py), read directly.
# usage: gnuplot -e "csv='results/h200/moe.csv'; out='results/figures/fig18-moe-steps.png'" plots/fig18-moe-steps.gp
models = "mixtral qwen3 olmoe"
tokens = "4096 16384"
nm = words(models)
nt = words(tokens)
# The implementations, left to right: impl/path as in the CSV, and the tick label.
impls = "k4_moe/fused k4_moe/unfused liger_moe/fused torch_moe/eager"
ni = words(impls)
array labels[ni] = ["k4_moe\nfused", "k4_moe\nunfused", "Liger\nfused MoE", "torch_moe\neager"]
device = system("sed -n 's/^# device=//p' '".csv."' | head -n 1")
# Files from e8492ec on have each step's p10 and p90 (route_us_p10, ...): 1, and each segment's top
# gets a whisker from its step's p10 to its p90 (stacked on the steps below at their medians).
spread = system("grep -c '^impl,.*route_us_p10' '".csv."'") + 0 > 0
step_whiskers = spread ? "for [j=1:5] forward using (bar(m, t) + 0.5 * w):(below(j) + column(word(cols, j).'_p10')):" . \
    "(0):(column(word(cols, j).'_p90') - column(word(cols, j).'_p10')) " . \
    "with vectors heads size screen 0.003,90 lw 1.2 lc rgb '#404040' title (j == 1 ? 'step p10–p90' : '')," : ""
# The forward's rows only: the layer backward's (`ggemm moe --backward`) say backward in their
# pass column, and so do those of its peers: the last column in older files, followed by the
# power-state columns since those were added.
forward = "< grep -Ev ',backward(,|$)' '".csv."'"
set datafile separator ","

# One pass over the CSV: each panel's highest point (bar top, whole-layer tick or floor), each
# model's shape, for the y ranges and the panel titles, and which implementations have rows.
array ymax[nm * nt]
array shape[nm]
array present[ni]
do for [i=1:nm*nt] { ymax[i] = 0 }
do for [i=1:nm] { shape[i] = "" }
do for [i=1:ni] { present[i] = 0 }
mi(m) = sum [i=1:nm] (word(models, i) eq m ? i : 0)
ii(impl, path) = sum [i=1:ni] (word(impls, i) eq impl."/".path ? i : 0)
ti(t) = sum [i=1:nt] (word(tokens, i) + 0 == t ? i : 0)
panel(m, t) = (mi(m) && ti(t) ? (ti(t) - 1) * nm + mi(m) : 0)
cols = "route_us permute_us gemm1_us gemm2_us combine_us"  # the stack, bottom to top
steps(dummy) = sum [i=1:5] column(word(cols, i))
max2(a, b) = (a > b ? a : b)
# The highest whisker: the layer's p90 and, where the CSV has them, each step's p90 on the medians below it
# (gnuplot's ?: evaluates one branch, so a CSV without the steps' columns never asks for them).
step_top(j) = (j == 1 ? 0 : sum [i=1:j-1] column(word(cols, i))) + column(word(cols, j)."_p90")
steps_top(dummy) = max2(max2(step_top(1), step_top(2)), max2(step_top(3), max2(step_top(4), step_top(5))))
top(dummy) = max2(max2(steps(0), column("time_us_median")), max2(column("time_us_p90"), spread ? steps_top(0) : 0))
top2(dummy) = max2(top(0), column("floor_us"))
set table $null
plot forward using (p = panel(strcol("model"), column("tokens")), \
                (p && top2(0) > ymax[p] ? ymax[p] = top2(0) : 0), \
                (mi(strcol("model")) ? shape[mi(strcol("model"))] = sprintf("d=%d, F=%d, %d experts, top-%d", \
                    column("d"), column("f"), column("experts"), column("topk")) : ""), \
                (ii(strcol("impl"), strcol("path")) ? present[ii(strcol("impl"), strcol("path"))] = 1 : 0), 0):(0) with table
unset table
# Slot of each implementation that has rows (0, 1, ...), and its tick.
array slot[ni]
ns = 0
do for [i=1:ni] { slot[i] = present[i] ? ns : NaN; ns = ns + present[i] }
keyp = 0  # the panel that draws the legend: the first with data
do for [i=nm*nt:1:-1] { if (ymax[i] > 0) { keyp = i } }

set terminal pngcairo size 1600,950 font "sans,12"
set output out
set termoption noenhanced
set encoding utf8
set style fill solid 0.9 border -1
set grid ytics
xlo = -0.6
xhi = (ns > 0 ? ns : 1) - 0.4
set xrange [xlo:xhi]
set xtics () nomirror
do for [i=1:ni] { if (present[i]) { set xtics add (labels[i] slot[i]) } }
set ytics nomirror
# x of a row's bar: its implementation's slot; NaN for rows of other panels or implementations.
bar(m, t) = (strcol("model") eq m && column("tokens") == t && ii(strcol("impl"), strcol("path")) ? \
             slot[ii(strcol("impl"), strcol("path"))] : NaN)
names = "route permute GEMM1 GEMM2 combine"  # the stack, bottom to top
colors = "#9467bd #8c564b #1f77b4 #17becf #e377c2"
below(j) = (j == 1 ? 0 : sum [i=1:j-1] column(word(cols, i)))
w = 0.3
set multiplot layout nt,nm margins 0.06,0.86,0.1,0.88 spacing 0.05,0.13 \
    title sprintf("MoE FFN layer on %s: time per step (stacked medians), whole-layer median and roofline floor", device) \
    font "sans,14"
do for [r=1:nt] {
  do for [c=1:nm] {
    m = word(models, c)
    t = word(tokens, r) + 0
    p = (r - 1) * nm + c
    set title sprintf("%s, T = %d tokens\n%s", m, t, shape[c]) font "sans,12"
    set ylabel (c == 1 ? "time, µs" : "")
    set xlabel (r == nt ? "implementation, path" : "") offset 0,-0.5
    # One legend for the figure, drawn in the strip right of the panels.
    if (p == keyp) { set key at screen 0.87, 0.5 left center vertical Left reverse samplen 2 spacing 1.3 } else { unset key }
    if (ymax[p] > 0) {
      set yrange [0:ymax[p] * 1.12]
      plot for [j=1:5] forward using (bar(m, t)):(below(j) + column(word(cols, j)) / 2):(bar(m, t) - w):(bar(m, t) + w): \
               (below(j)):(below(j) + column(word(cols, j))) with boxxyerror lc rgb word(colors, j) title word(names, j), \
           forward using (bar(m, t) - w - 0.04):"time_us_median":(2 * w + 0.08):(0) with vectors nohead lw 3 \
               lc rgb "#000000" title "whole layer", \
           forward using (bar(m, t) + w + 0.1):"time_us_p10":(0):(column("time_us_p90") - column("time_us_p10")) \
               with vectors heads size screen 0.004,90 lw 1.5 lc rgb "#000000" title "layer p10–p90", \
           @step_whiskers \
           forward using (bar(m, t)):"time_us_median":(sprintf("%.0f", column("time_us_median"))) with labels \
               offset 0,0.7 font "sans,10" notitle, \
           forward using (bar(m, t) >= 0 ? xlo : NaN):"floor_us":(xhi - xlo):(0) with vectors nohead lw 2 dt 2 \
               lc rgb "#ff7f0e" title "roofline floor"
    } else {
      # Nothing measured for this panel: say so instead of an empty frame with a meaningless axis.
      set yrange [0:1]
      unset ytics
      set label 1 "not measured" at 0.5 * (xlo + xhi), 0.5 center
      plot NaN notitle
      unset label 1
      set ytics nomirror
    }
  }
}
unset multiplot
