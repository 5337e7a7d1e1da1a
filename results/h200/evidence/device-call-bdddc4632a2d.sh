# Session 8, call 3: the dynamic deal with its draw one item ahead. Checks (split and edge m-lists),
# sanitizers on both dyn twins, the A/B of static and dynamic twins (DeepSeek-V3-like aside: a
# minute a row), traces at 16k s=0 and 1.2.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-290} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; head -2 $o/gpu.txt | tail -1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 --target ggemm > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
for k in k5_wgrad_pingpong_dyn k5_wgrad_m256_dyn; do for args in "--m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384" "--m-list 0,1,130,0,64,257,3,200,127,65 --k 256 --n 392" "--m-list 0,0,0 --k 64 --n 8" "--tokens 4096 --experts 1 --k 200 --n 72"; do
  timeout 20 $b run --kernel $k $args --reps 3 --warmup 1 2>&1 | grep -E "check" | sed "s/^/$k $args: /"; done; done | tee $o/checks.log
timeout 60 tests/sanitize.sh build k5_wgrad_pingpong_dyn > $o/sanitize-dyn.log 2>&1; echo "== sanitize rc=$? at $((SECONDS-start)) s"; pack
for s in 0 1.2; do for k in k5_wgrad_pingpong_dyn k5_wgrad_m256_dyn; do
  timeout 10 $b trace --kernel $k --tokens 16384 --experts 64 --k 1024 --n 2688 --skew $s --out $o/trace_${k}_s$s > $o/trace_${k}_s$s.log 2>&1; rm -f $o/trace_${k}_s$s/trace.json; gzip $o/trace_${k}_s$s/trace.csv
done; done; echo "== traces at $((SECONDS-start)) s"; grep -h "kernel:\|tail\|imbalance" $o/trace_*.log
ks=k5_wgrad_pingpong,k5_wgrad_pingpong_dyn,k5_wgrad_m256,k5_wgrad_m256_dyn
sets=backward_stages,backward_skew,backward_mixtral,backward_olmoe,backward_decode,backward_qwen3_30b_a3b
timeout $(( $(left) - 25 )) $b sweep --pass backward --set $sets --kernels $ks --out $o/wgrad-dyn2.csv > $o/wgrad-dyn2.log 2>&1; echo "== A/B rc=$? at $((SECONDS-start)) s"; tail -1 $o/wgrad-dyn2.log; pack
