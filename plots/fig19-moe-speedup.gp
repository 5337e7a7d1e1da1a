# Figure 19: k4_moe against eager PyTorch as the token count grows. Per model, the speed-up of the
# whole layer over torch_moe (its median time / k4_moe's, same run) for the fused path (solid) and
# the unfused one (dashed); above 1 is faster than torch. Rows whose check failed are left out.
# Data: results/<gpu>/moe.csv as written (ggemm moe, then harness/peers/torch_moe.py), read directly.
# usage: gnuplot -e "csv='results/h200/moe.csv'; out='results/figures/fig19-moe-speedup.png'" plots/fig19-moe-speedup.gp
models = "mixtral qwen3 olmoe"
nm = words(models)
device = system("sed -n 's/^# device=//p' '".csv."' | head -n 1")
# The forward's rows only: the layer backward's (`ggemm moe --backward`) say backward in their
# pass column, and so do those of its peers: the last column in older files, followed by the
# power-state columns since those were added.
forward = "< grep -Ev ',backward(,|$)' '".csv."'"
set datafile separator ","

# One pass over the CSV into arrays indexed by model and log2(T) (T up to 2^20): the median time
# of torch_moe, k4_moe fused and k4_moe unfused, so the ratios can be formed per (model, T).
L = 21
array tt[nm * L]
array tf[nm * L]
array tu[nm * L]
do for [i=1:nm*L] { tt[i] = NaN; tf[i] = NaN; tu[i] = NaN }
mi(m) = sum [i=1:nm] (word(models, i) eq m ? i : 0)
at(m, t) = (mi(m) && t >= 1 && t < 2**L ? (mi(m) - 1) * L + int(log(t) / log(2) + 0.5) + 1 : 0)
set table $null
plot forward using (k = at(strcol("model"), column("tokens")), v = column("time_us_median"), \
                (k && strcol("check") eq "pass" ? \
                  (strcol("impl") eq "torch_moe" ? tt[k] = v : \
                   strcol("impl") eq "k4_moe" && strcol("path") eq "fused" ? tf[k] = v : \
                   strcol("impl") eq "k4_moe" && strcol("path") eq "unfused" ? tu[k] = v : 0) : 0), 0):(0) with table
unset table
# The ratios as a table: T, then per model fused and unfused ("-" where a row is missing).
set print $ratio
print "# T, then fused and unfused per model"  # the datablock exists even when no ratio does
do for [l=0:L-1] {
  line = sprintf("%d", 2**l)
  any = 0
  do for [c=1:nm] {
    k = (c - 1) * L + l + 1
    f = tt[k] / tf[k]
    u = tt[k] / tu[k]
    line = line.(f == f ? sprintf(" %.4f", f) : " -").(u == u ? sprintf(" %.4f", u) : " -")
    any = any || f == f || u == u
  }
  if (any) { print line }
}
unset print
set datafile separator whitespace
set datafile missing "-"

set terminal pngcairo size 1100,700 font "sans,12"
set output out
set termoption noenhanced
set title sprintf("MoE FFN layer on %s: speed-up of k4_moe over torch_moe (eager, same run)", device)
set xlabel "tokens T (log scale)"
set ylabel "speed-up over torch_moe  (torch median time / k4_moe median time)"
set logscale x 2
set xrange [128:32768]
set yrange [0:*]
set grid xtics ytics lc rgb "#dddddd"
set key top left opaque box
colors = "#d62728 #1f77b4 #2ca02c"
plot 1 with lines lw 2 dt 3 lc rgb "#555555" title "torch_moe (1x)", \
     for [c=1:nm] $ratio using 1:(column(2 * c)) with linespoints lw 3 pt 7 ps 1.4 lc rgb word(colors, c) \
         title word(models, c).", fused", \
     for [c=1:nm] $ratio using 1:(column(2 * c + 1)) with linespoints lw 2 dt 2 pt 6 ps 1.4 \
         lc rgb word(colors, c) title word(models, c).", unfused"
