# Figure 3: tile quantization. Useful TFLOP/s against the tile height BM (32, 64, 128, k3's adaptive
# 128/64) at 16384 and 2048 routed rows, s = 0 and 1.2; η (from ggemm problem) in the tick labels.
# Data: plots/figdata.py data DIR (fig03_<tokens>.dat, params.gp).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig03-tile-quantization.png'" plots/fig03-tile-quantization.gp
load dir.'/params.gp'
set terminal pngcairo size 1400,600 font "sans,12"
set output out
set termoption noenhanced
set datafile missing "-"
set multiplot layout 1,2 title sprintf("Tile quantization on %s: useful TFLOP/s against the tile height BM (E=64, K=1024, N=2688)", device)
set xlabel "tile height BM, rows  (η = useful / scheduled rows)" offset 0,-2.2
set ylabel "useful TFLOP/s"
set xrange [-0.4:3.4]
set grid
set bmargin 8.5
col(f) = word("#1f77b4 #2ca02c #d62728", f)
do for [t in "16384 2048"] {
  dat = dir.'/fig03_'.t.'.dat'
  eval('set xtics '.value('xt03_'.t))
  set title sprintf("%s routed rows", t)
  if (t eq "16384") { set key top left } else { set key bottom right }
  set yrange [0:*]
  plot for [f=1:3] dat using 1:(column(2 + 2*f)) with linespoints lw 2 pt 7 ps 1.3 lc rgb col(f) \
           title word("k1_mmasync k2_tma_ws k3_wgmma", f) . " s=0", \
       for [f=1:3] dat using 1:(column(3 + 2*f)) with linespoints lw 2 dt 2 pt 6 ps 1.3 lc rgb col(f) \
           title word("k1_mmasync k2_tma_ws k3_wgmma", f) . " s=1.2"
}
unset multiplot
