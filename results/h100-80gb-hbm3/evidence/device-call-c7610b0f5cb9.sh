# Session 8, call 2: the dynamic deal (k5_wgrad_pingpong_dyn, k5_wgrad_m256_dyn). The README test
# command's tests (the new twins in every GPU test); sanitizers on both; an A/B sweep of the static
# and dynamic twins on every backward set incl. the skew grid; traces of both at 16k s=1.2.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; head -2 $o/gpu.txt | tail -1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
timeout 170 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head; pack
timeout 100 tests/sanitize.sh build k5_wgrad_pingpong_dyn k5_wgrad_m256_dyn > $o/sanitize-dyn.log 2>&1; echo "== sanitize rc=$? at $((SECONDS-start)) s"; grep -cE "ERROR SUMMARY: 0|RACECHECK SUMMARY: 0" $o/sanitize-dyn.log; pack
ks=k5_wgrad_pingpong,k5_wgrad_pingpong_dyn,k5_wgrad_m256,k5_wgrad_m256_dyn
sets=backward_stages,backward_mixtral,backward_deepseek_v3,backward_qwen3_30b_a3b,backward_olmoe,backward_decode,backward_skew
timeout $(( $(left) - 30 )) $b sweep --pass backward --set $sets --kernels $ks --out $o/wgrad-dyn.csv > $o/wgrad-dyn.log 2>&1; echo "== A/B rc=$? at $((SECONDS-start)) s"; tail -2 $o/wgrad-dyn.log; pack
for k in k5_wgrad_pingpong_dyn k5_wgrad_m256_dyn; do
  timeout 12 $b trace --kernel $k --tokens 16384 --experts 64 --k 1024 --n 2688 --skew 1.2 --out $o/trace_$k > $o/trace_$k.log 2>&1; rm -f $o/trace_$k/trace.json; gzip $o/trace_$k/trace.csv
done; echo "== traces at $((SECONDS-start)) s"; grep -h "busy\|tail\|imbalance\|kernel:" $o/trace_*.log
