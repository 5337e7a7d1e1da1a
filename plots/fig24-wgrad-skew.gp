# Figure 24: the backward against routing skew, beside the forward's (figure 11). Useful TFLOP/s
# (2 tokens k n over the median time) of k5_wgrad and k5_dgrad and of torch._grouped_mm's 2D x 2D
# wgrad and dgrad forms, measured in the same run, over the skew grid of the backward's sets
# (64 experts, k 1024, n 2688), one panel per routed row count; in grey the forward's k3
# configuration with adaptive rows (k3_wgmma_coop_m64_n192) from the forward sweep, the shape
# dgrad is measured against. Rows whose check failed are left out.
# Data: results/<gpu>/backward.csv and sweep.csv as written (ggemm sweep, then the torch peer),
# read directly; plots/figures.sh draws it only when backward.csv has k5_wgrad rows.
# usage: gnuplot -e "csv='results/h200/backward.csv'; fwd='results/h200/sweep.csv'; out='results/figures/fig24-wgrad-skew.png'" plots/fig24-wgrad-skew.gp
device = system("sed -n 's/^# device=//p' '".csv."' | head -n 1")
set datafile separator ","
set terminal pngcairo size 1280,560 font "sans,12"
set output out
set termoption noenhanced
set multiplot layout 1,2 title sprintf("The backward against routing skew on %s: useful TFLOP/s, peers in the same run (64 experts, k 1024, n 2688)", device)
set xlabel "skew s  (m_e ~ (e+1)^-s)"
set ylabel "useful TFLOP/s (2 tokens k n / median time)"
set grid
set xrange [-0.05:2.05]
set yrange [0:*]
set key below horizontal maxcols 3 samplen 2 font "sans,10" width 0
# One pass per (series, row count) into a datablock $S<i>_<rows> of (skew, useful TFLOP/s) from
# the passing rows at the grid's shape; smooth unique then orders them by skew (a shape of two
# sets sits under the first set's name, so the grid's s = 0 and 1.2 come before its other points).
series = "k5_wgrad torch_grouped_mm_wgrad k5_dgrad torch_grouped_mm_dgrad k3_wgmma_coop_m64_n192"
grid(name, rows) = strcol("kernel") eq name && column("tokens") == rows && column("experts") == 64 && \
                   column("k") == 1024 && column("n") == 2688 && strcol("check") eq "pass"
do for [t in "16384 2048"] {
  do for [i=1:words(series)] {
    name = word(series, i)
    file = i < words(series) ? csv : fwd
    eval sprintf("set print $S%d_%s", i, t)  # the block exists even when no row is in it
    print "# skew, useful TFLOP/s"
    unset print
    eval sprintf("set table $S%d_%s append", i, t)
    plot file using (column("skew")):(column("useful_tflops")) with table if (grid(name, int(t)))
    unset table
  }
}
set datafile separator whitespace  # the datablocks' own
do for [t in "16384 2048"] {
  set title sprintf("%s routed rows", t)
  eval sprintf("plot $S1_%s smooth unique with linespoints lw 2 pt 7 lc rgb '#d62728' title 'k5_wgrad', "\
               ."$S2_%s smooth unique with linespoints lw 2 dt 2 pt 6 lc rgb '#d62728' title 'torch._grouped_mm, 2D x 2D wgrad', "\
               ."$S3_%s smooth unique with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'k5_dgrad', "\
               ."$S4_%s smooth unique with linespoints lw 2 dt 2 pt 4 lc rgb '#1f77b4' title 'torch._grouped_mm, dgrad form', "\
               ."$S5_%s smooth unique with linespoints lw 1 dt 3 pt 9 lc rgb '#7f7f7f' title 'forward: k3_wgmma_coop_m64_n192 (sweep.csv)'", t, t, t, t, t)
}
unset multiplot
