# Figure 11: the η model against the measured skew loss. Lines: the model's 1 - η(s)/η(0) per tile
# height (ggemm problem); points: the measured 1 - TF(s)/TF(0) (useful TFLOP/s over the sweep's skew
# grid) per configuration, coloured by its tile height; 16384 and 2048 routed rows.
# Data: plots/figdata.py data DIR (fig11_<tokens>.dat, params.gp).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig11-eta-vs-skew-loss.png'" plots/fig11-eta-vs-skew-loss.gp
load dir.'/params.gp'
set terminal pngcairo size 1280,1000 font "sans,12"
set output out
set termoption noenhanced
set datafile missing "-"
set multiplot layout 2,2 title sprintf("Skew loss on %s: measured 1 - TF(s)/TF(0) (points) against the eta model 1 - eta(s)/eta(0) (lines)", device)
set xlabel "skew s  (m_e ~ (e+1)^-s)"
set ylabel "loss of useful TFLOP/s vs s = 0 (fraction; < 0: gain)"
set grid
set bmargin 7.5
set xrange [-0.05:2.05]
set key below horizontal maxcols 3 samplen 2 font "sans,10" width 0
c32 = "#ff7f0e"; c64 = "#2ca02c"; c128 = "#1f77b4"; cad = "#d62728"
# columns: 1 skew, 2-5 model bm32 bm64 bm128 adaptive, 6 k1 bm128, 7 k1 bm64, 8 k1 bm32,
#          9 k2 s3 (BM 128), 10 k2 bm64, 11 k3 coop_m128_n192 (BM 128), 12 k3 coop_m64_n192 (adaptive)
adlabel = adaptive_is_bm64 ? "model, adaptive (= BM 64)" : "model, adaptive 128/64"
do for [t in "16384 2048"] {
  dat = dir.'/fig11_'.t.'.dat'
  set title sprintf("k1_mmasync, %s routed rows", t)
  plot dat using 1:4 with lines lw 3 lc rgb c128 dt 1 title "model, BM 128", \
       dat using 1:3 with lines lw 3 lc rgb c64 dt 1 title "model, BM 64", \
       dat using 1:2 with lines lw 3 lc rgb c32 dt 1 title "model, BM 32", \
       dat using 1:6 with linespoints lw 1 dt 3 pt 7 ps 1.3 lc rgb c128 title "k1 bm128", \
       dat using 1:7 with linespoints lw 1 dt 3 pt 7 ps 1.3 lc rgb c64 title "k1 bm64", \
       dat using 1:8 with linespoints lw 1 dt 3 pt 7 ps 1.3 lc rgb c32 title "k1 bm32"
  set title sprintf("k2_tma_ws and k3_wgmma, %s routed rows", t)
  plot dat using 1:4 with lines lw 3 lc rgb c128 dt 1 title "model, BM 128", \
       dat using 1:3 with lines lw 3 lc rgb c64 dt 1 title "model, BM 64", \
       dat using 1:5 with lines lw 3 lc rgb cad dt 2 title adlabel, \
       dat using 1:9 with linespoints lw 1 dt 3 pt 5 ps 1.2 lc rgb c128 title "k2 s3 (BM 128)", \
       dat using 1:10 with linespoints lw 1 dt 3 pt 5 ps 1.2 lc rgb c64 title "k2 bm64", \
       dat using 1:11 with linespoints lw 1 dt 3 pt 9 ps 1.5 lc rgb c128 title "k3 coop_m128_n192 (BM 128)", \
       dat using 1:12 with linespoints lw 1 dt 3 pt 9 ps 1.5 lc rgb cad title "k3 coop_m64_n192 (adaptive)"
}
unset multiplot
