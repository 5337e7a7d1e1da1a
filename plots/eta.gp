# Tile utilisation eta = useful rows / scheduled rows against routing skew, per BLOCK_M.
# Computed by the problem model (no GPU): see run.sh, which writes the data with ggemm problem.
# usage: gnuplot -e "dat='results/eta.dat'; out='results/eta.png'" plots/eta.gp
set terminal pngcairo size 1100,480 font "sans,11"
set output out
set termoption noenhanced
set multiplot layout 1,2 title "Tile utilisation eta (E=64): the padding each BLOCK_M pays as skew grows"
set xlabel "skew s  (m_e ~ (e+1)^-s)"
set ylabel "eta"
set yrange [0:1.05]
set grid
set key bottom left
do for [t in "16384 2048"] {
  set title sprintf("%s routed rows", t)
  plot dat using ($1==t+0 ? $2 : 1/0):3 with linespoints title "BM=32", \
       dat using ($1==t+0 ? $2 : 1/0):4 with linespoints title "BM=64", \
       dat using ($1==t+0 ? $2 : 1/0):5 with linespoints title "BM=128", \
       dat using ($1==t+0 ? $2 : 1/0):6 with linespoints title "adaptive 128/64 (same eta as BM=64)"
}
unset multiplot
