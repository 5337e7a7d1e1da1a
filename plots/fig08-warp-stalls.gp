# Figure 8: warp stall breakdown per variant at 16384 rows, s = 0: ncu's
# smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio (cycles a warp spends stalled
# for <reason> per issued instruction), stacked. Reasons under 0.3 in every variant are "other".
# Data: plots/figdata.py data DIR (fig08.dat from results/<gpu>/ncu/).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig08-warp-stalls.png'" plots/fig08-warp-stalls.gp
load dir.'/params.gp'
dat = dir.'/fig08.dat'
set terminal pngcairo size 1280,680 font "sans,12"
set output out
set termoption noenhanced
set title sprintf("Warp stall breakdown on %s, 16384 rows, s = 0 (ncu, one launch each)", device)
set ylabel "warp cycles stalled per issued instruction"
set xlabel "configuration"
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border -1
set boxwidth 0.7
set yrange [0:*]
set grid ytics
set key outside right top vertical invert title "stall reason (top of the stack first)"
set xtics rotate by -25 left nomirror
set datafile missing "-"
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #aec7e8 #ffbb78"
plot for [c=2:n08+1] dat using c:xtic(1) title columnheader(c) lc rgb word(colors, c - 1)
