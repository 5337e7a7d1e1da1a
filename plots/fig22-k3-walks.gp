# Figure 22: one k3 configuration (k3_wgmma_pingpong_m64_n192) at 16k rows, s = 1.2, walking its tile
# list in expert-major order and folded (the reverted trial, k3 README), over the launch, in slices
# of about 5 µs: above, useful TFLOP/s (each tile's FLOPs spread over its span); below, the rate at
# which B panels are read for the first time (a lower bound on B's DRAM traffic), with the ceilings.
# Data: plots/figdata.py data DIR (fig22_expert-major.dat, fig22_folded.dat, params.gp).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig22-k3-walks.png'" plots/fig22-k3-walks.gp
load dir.'/params.gp'
set terminal pngcairo size 1100,900 font "sans,12"
set output out
set termoption noenhanced
set multiplot layout 2,1 title sprintf("k3_wgmma_pingpong_m64_n192 at 16k rows, s = 1.2, on %s: expert-major against folded walk (ggemm trace)", device) font "sans,12"
set grid xtics ytics lc rgb "#dddddd"
set key top right opaque box
set xrange [0:*]
set yrange [0:gemm_tflops * 1.35]
set xlabel "time since the launch began, µs"
set ylabel "useful TFLOP/s"
plot gemm_tflops with lines lw 1.5 dt 2 lc rgb "#555555" title sprintf("dense bf16 GEMM ceiling %.0f TFLOP/s", gemm_tflops), \
     dir.'/fig22_expert-major.dat' using 1:2 with linespoints lw 3 pt 7 ps 0.8 lc rgb "#1f77b4" title "expert-major (kept)", \
     dir.'/fig22_folded.dat' using 1:2 with linespoints lw 3 pt 5 ps 0.8 lc rgb "#d62728" title "folded (reverted)"
set ylabel "B panels first read, TB/s"
set yrange [0:copy_gbps / 1000 * 1.5]
plot copy_gbps / 1000 with lines lw 1.5 dt 2 lc rgb "#555555" title sprintf("copy ceiling %.2f TB/s", copy_gbps / 1000), \
     dir.'/fig22_expert-major.dat' using 1:3 with linespoints lw 3 pt 7 ps 0.8 lc rgb "#1f77b4" title "expert-major (kept)", \
     dir.'/fig22_folded.dat' using 1:3 with linespoints lw 3 pt 5 ps 0.8 lc rgb "#d62728" title "folded (reverted)"
unset multiplot
