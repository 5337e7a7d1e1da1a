# Figure 1: the best configuration of each stage per case, with torch._grouped_mm and the roofline
# as each case's reference lines; inside each bar, the configuration that is the best of its stage. Data: plots/figdata.py data DIR (fig01.dat, params.gp).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig01-stage-progression.png'" plots/fig01-stage-progression.gp
load dir.'/params.gp'
dat = dir.'/fig01.dat'
set terminal pngcairo size 1280,660 font "sans,12"
set output out
set termoption noenhanced
set title sprintf("Stage progression on %s: the best configuration of each stage per case (E=64, N=2688)", device)
set ylabel "useful TFLOP/s  (2·tokens·K·N / median time, log scale)"
set xlabel "case (routed rows, skew s, K = 1024 unless given)"
set logscale y
set yrange [8:3000]
set xrange [-0.6:4.6]
set grid ytics
set key top center horizontal maxrows 2 samplen 3 width 1
set style fill solid 0.85 border -1
set boxwidth 0.18
set xtics ("16k s=0" 0, "16k s=1.2" 1, "2k s=0" 2, "2k s=1.2" 3, "16k s=0 K=8192" 4) nomirror
set datafile missing "-"
w = 0.2
off(j) = (j - 1.5) * w
plot for [j=0:3] dat using ($1 + off(j)):(column(3 + 2*j)) with boxes lc rgb word("#8c8c8c #1f77b4 #2ca02c #d62728", j + 1) \
         title word("k0_fma k1_mmasync k2_tma_ws k3_wgmma", j + 1), \
     for [j=0:3] dat using ($1 + off(j)):(column(3 + 2*j)):(sprintf("%.0f", column(3 + 2*j))) with labels \
         offset 0,0.7 font "sans,10" notitle, \
     for [j=1:3] dat using ($1 + off(j)):(10):(stringcolumn(4 + 2*j)) with labels rotate by 90 left \
         offset 0,0.3 font "sans,9" tc rgb "white" notitle, \
     dat using ($1 - 0.45):11:(0.9):(0) with vectors nohead lw 3 dt 2 lc rgb "#000000" title "torch_grouped_mm (same run)", \
     dat using ($1 - 0.45):12:(0.9):(0) with vectors nohead lw 3 lc rgb "#ff7f0e" title "roofline (measured GEMM rate, copy bandwidth)"
