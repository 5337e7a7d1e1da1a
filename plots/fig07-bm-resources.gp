# Figure 7: what changes in k1 as BM shrinks (128, 64, 32), at 16384 rows, s = 0: registers, blocks
# per SM, achieved warps, instructions executed, issue-slot use and tensor-pipe use.
# Data: plots/figdata.py data DIR (fig07.dat from results/<gpu>/ncu/ and kernels.csv).
# usage: gnuplot -e "dir='DIR'; out='results/figures/fig07-bm-resources.png'" plots/fig07-bm-resources.gp
load dir.'/params.gp'
dat = dir.'/fig07.dat'
set terminal pngcairo size 1280,720 font "sans,12"
set output out
set termoption noenhanced
set style fill solid 0.85 border -1
set boxwidth 0.6
set xrange [-0.6:2.6]
set yrange [0:*]
set grid ytics
set key top left samplen 1
set offsets 0,0,graph 0.22,0
set multiplot layout 2,3 title sprintf("k1_mmasync as BM shrinks, on %s (16384 rows, s = 0; ncu, one launch each)", device)
ylab = "registers / thread|blocks / SM|warps / SM (achieved)|instructions executed, millions|issue slots busy, % of peak|tensor pipe busy, % of peak"
src = "registers (ncu launch__registers_per_thread)|residency (ggemm list, kernels.csv)|warps (ncu sm__warps_active)|instructions (ncu smsp__inst_executed)|issue rate (ncu smsp__issue_active)|tensor pipe (ncu tensor_op_hmma cycles)"
fmts = "%.0f|%.0f|%.1f|%.1f|%.1f|%.1f"
field(s, i) = (i == 1 ? s[1:strstrt(s, "|") - 1] : field(s[strstrt(s, "|") + 1:], i - 1))
do for [c=1:6] {
  set ylabel (c < 6 ? field(ylab, c) : ylab[strstrt(ylab, "tensor"):])
  set xlabel "tile height BM, rows"
  set title (c < 6 ? field(src, c) : src[strstrt(src, "tensor pipe"):]) font "sans,11"
  f = (c < 6 ? field(fmts, c) : "%.1f")
  plot dat using 1:(column(c + 2)):xtic(2) with boxes lc rgb "#1f77b4" title "k1_mmasync", \
       dat using 1:(column(c + 2)):(sprintf(f, column(c + 2))) with labels offset 0,0.8 notitle
}
unset multiplot
