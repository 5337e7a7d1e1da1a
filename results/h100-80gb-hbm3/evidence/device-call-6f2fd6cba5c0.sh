# Session 8, first call. Build + the README test command's tests; then on an H200 issue 26's grid
# (entry point + torch) and worklog targets (+ dense cuBLAS, torch); on an H100 issue 28's
# diagnosis (ncu source pages of the wgrad twin and dgrad; traces of k5_wgrad and m256 at 16k s=1.2).
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-550} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; cat $o/gpu.txt
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
timeout 170 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head; pack
if grep -q H200 $o/gpu.txt; then
  timeout $(( $(left) - 200 )) $b sweep --pass forward --set 'grid*' --kernels k3_wgmma --out $o/grid-default.csv > $o/grid.log 2>&1; echo "== grid rc=$? at $((SECONDS-start)) s"; tail -1 $o/grid.log; pack
  $b cases --pass forward --set 'grid*' --kernels torch_grouped_mm --format csv > /tmp/c2.csv
  timeout $(( $(left) - 110 )) python3 harness/peers/torch_grouped_mm.py --csv $o/grid-default.csv --cases /tmp/c2.csv > $o/grid-torch.log 2>&1; echo "== grid torch rc=$? at $((SECONDS-start)) s"; tail -1 $o/grid-torch.log; pack
  sets=stages,dense
  [ $(left) -gt 80 ] && timeout $(( $(left) - 50 )) $b sweep --pass forward --set $sets --out $o/targets.csv > $o/targets.log 2>&1; echo "== targets rc=$? at $((SECONDS-start)) s"; pack
  $b cases --pass forward --set $sets --kernels torch_grouped_mm --format csv > /tmp/c1.csv
  [ $(left) -gt 30 ] && timeout $(( $(left) - 5 )) python3 harness/peers/torch_grouped_mm.py --csv $o/targets.csv --cases /tmp/c1.csv > $o/targets-torch.log 2>&1; echo "== targets torch rc=$? at $((SECONDS-start)) s"
else
  for k in k5_wgrad_pingpong k5_dgrad; do
    timeout 60 ncu --section WarpStateStats --section SourceCounters --import-source yes -k regex:'wgrad|dgrad' --launch-count 1 -o /tmp/rep_$k $b run --kernel $k --reps 1 --warmup 0 > $o/ncu_$k.log 2>&1
    ncu -i /tmp/rep_$k.ncu-rep --page source --csv --print-source sass > $o/ncu_source_$k.csv 2>&1; gzip $o/ncu_source_$k.csv
  done; echo "== source pages at $((SECONDS-start)) s"; pack
  for k in k5_wgrad k5_wgrad_m256 k5_wgrad_pingpong; do
    timeout 30 $b trace --kernel $k --tokens 16384 --experts 64 --k 1024 --n 2688 --skew 1.2 --out $o/trace_$k > $o/trace_$k.log 2>&1; rm -f $o/trace_$k/trace.json; gzip $o/trace_$k/trace.csv
  done; echo "== traces at $((SECONDS-start)) s"
fi
