# Figure 14: a roofline. Every configuration x case of the sweep's "stages" set as a point: x =
# compulsory-byte intensity (useful FLOP / (A once + B once per non-empty expert + C once), from
# ggemm problem), y = useful TFLOP/s; under the ceilings measured in the same run (copy bandwidth,
# dense bf16 GEMM rate; FFMA and mma.sync instruction peaks dashed).
# Data: plots/figdata.py data DIR (fig14.dat, fig14_cases.dat, params.gp).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig14-roofline.png'" plots/fig14-roofline.gp
load dir.'/params.gp'
dat = dir.'/fig14.dat'
set terminal pngcairo size 1100,800 font "sans,12"
set output out
set termoption noenhanced
set title sprintf("Roofline on %s: every configuration and case, under the ceilings measured in the same run", device)
set xlabel "compulsory-byte intensity, FLOP/byte  (useful FLOP / (A + B of non-empty experts + C))"
set ylabel "useful TFLOP/s"
set logscale xy
set xrange [10:1000]
set yrange [3:1500]
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left opaque box
roof(x) = (x * copy_gbps / 1000 < gemm_tflops ? x * copy_gbps / 1000 : gemm_tflops)
set samples 400
colors = "#8c8c8c #1f77b4 #2ca02c #d62728 #000000"
names = "k0_fma k1_mmasync k2_tma_ws k3_wgmma peers"
pts = "5 7 9 11 13"
set label 1 sprintf("copy %.0f GB/s", copy_gbps) at 14, roof(14) * 1.5 rotate by 38 font "sans,10"
set label 2 sprintf("dense bf16 GEMM %.0f TFLOP/s", gemm_tflops) at 800, gemm_tflops * 1.12 right font "sans,10"
set label 3 sprintf("mma.sync peak %.0f", mma_sync_tflops) at 950, mma_sync_tflops * 1.1 right font "sans,10"
set label 4 sprintf("FFMA peak %.1f", ffma_tflops) at 950, ffma_tflops * 1.12 right font "sans,10"
plot roof(x) with lines lw 3 lc rgb "#ff7f0e" title "roofline (copy, GEMM ceilings)", \
     mma_sync_tflops with lines lw 1.5 dt 2 lc rgb "#555555" title "instruction peaks (mma.sync, FFMA)", \
     ffma_tflops with lines lw 1.5 dt 2 lc rgb "#555555" notitle, \
     for [i=0:4] dat index i using ($3 == 1 ? $1 : 1/0):2 with points pt (word(pts, i + 1) + 0) ps 1.5 \
         lc rgb word(colors, i + 1) title word(names, i + 1), \
     for [i=0:4] dat index i using ($3 == 0 ? $1 : 1/0):2 with points pt (word(pts, i + 1) - 1) ps 1.5 \
         lc rgb word(colors, i + 1) notitle, \
     1/0 with points pt 7 ps 1.5 lc rgb "#000000" title "filled: s = 0", \
     1/0 with points pt 6 ps 1.5 lc rgb "#000000" title "open: s = 1.2", \
     dir.'/fig14_cases.dat' using 1:(3.3):2 with labels rotate by 90 left font "sans,10" notitle
