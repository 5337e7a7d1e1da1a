# Session 7, call 5 (what device time is left): where k5_wgrad_pingpong's and k5_dgrad's warps
# stall at the 16k case (ncu warp-state sampling with source counters), for the next session.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 --target ggemm > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
for k in k5_wgrad_pingpong k5_dgrad; do
  timeout 60 ncu --section WarpStateStats --section SourceCounters -k regex:'wgrad|dgrad' --launch-count 1 $b run --kernel $k --reps 1 --warmup 0 > $o/ncu_stalls_$k.txt 2>&1; echo "== $k rc=$? at $((SECONDS-start)) s"; pack
done
