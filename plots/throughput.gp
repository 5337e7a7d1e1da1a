# Useful TFLOP/s per kernel for each sweep case, peers included.
# usage: gnuplot -e "dat='results/h200/throughput.dat'; out='results/h200/throughput.png'; device='NVIDIA H200'" plots/throughput.gp
set terminal pngcairo size 1400,640 font "sans,11"
set output out
set termoption noenhanced
set title sprintf("Ragged-M grouped GEMM, E=64, N=2688: useful TFLOP/s on %s (median, L2 flushed)", device)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set datafile missing "-"
set logscale y
set yrange [5:*]
set ylabel "useful TFLOP/s  (2·tokens·K·N / t)"
set grid ytics
set key outside right top vertical
set xtics rotate by -35 left nomirror
ncases = int(system(sprintf("sed -n 's/^# ncases=//p' '%s'", dat)))
plot for [c=2:ncases+1] dat using c:xtic(1) title columnheader(c)
