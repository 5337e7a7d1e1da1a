# Session 6, call B (~8 min; packs after every section). (1) The route step, base (7b26813)
# against this build: ncu kernel durations and the layer's per-step times, two interleaved
# rounds. Prediction: the route kernel falls from most of the step to a few us, the step with it.
# (2) wgrad against its ping-pong twin, interleaved. Prediction: ping-pong faster where items are
# short (4-8 stages: the worklog cases), level on long items (Mixtral-like). (3) The test
# command's tests at this commit. (4) Sanitizers on the new paths. (5) A second wgrad round.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; mkdir -p $o /tmp/base
left() { echo $((${CALL_LIMIT:-440} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt 2>&1
tar xf .devscripts/base.tar -C /tmp/base
(cd /tmp/base && cmake --preset release >/dev/null 2>&1 && cmake --build --preset release -j 4 --target ggemm > $o/build-base.log 2>&1) &
(cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 12 > $o/build.log 2>&1) &
wait; echo "== built in $((SECONDS-start)) s"; ls /tmp/base/build/bin/ggemm build/bin/ggemm || { tail -30 $o/build.log; exit 1; }
b=build/bin/ggemm
for v in base new; do bin=$b; [ $v = base ] && bin=/tmp/base/build/bin/ggemm
  for m in "qwen3 256" "mixtral 256" "mixtral 4096" "olmoe 4096"; do set -- $m
    timeout 30 ncu --metrics gpu__time_duration.sum -k regex:"router|route_kernel|permute" --launch-count 3 $bin moe --model $1 --tokens $2 --reps 1 --warmup 0 > $o/ncu-route-$v-$1-$2.txt 2>&1
  done
done; echo "== ncu at $((SECONDS-start)) s"
for r in 1 2; do for v in base new; do bin=$b; c=$GG_COMMIT; [ $v = base ] && { bin=/tmp/base/build/bin/ggemm; c=7b26813; }
  GG_COMMIT=$c timeout 40 $bin moe --model mixtral,qwen3,olmoe --tokens 256,4096 --out $o/moe-$v-$r.csv > $o/moe-$v-$r.log 2>&1
done; done; echo "== moe A/B at $((SECONDS-start)) s"; pack
ws=backward_stages,backward_mixtral,backward_deepseek_v3
timeout 90 $b sweep --pass backward --set $ws --kernels k5_wgrad,k5_wgrad_pingpong --out $o/wgrad-pp-1.csv > $o/wgrad-pp-1.log 2>&1; echo "== wgrad A/B 1 rc=$? at $((SECONDS-start)) s"; pack
timeout 170 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head; pack
for tool in memcheck racecheck synccheck; do
  timeout 25 compute-sanitizer --tool $tool $b run --kernel k5_wgrad_pingpong --m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384 --reps 1 --warmup 0 > $o/sanitize-pingpong-$tool.log 2>&1; echo "$tool pingpong rc=$? $(tail -1 $o/sanitize-pingpong-$tool.log)"
done
timeout 25 compute-sanitizer --tool memcheck $b moe --model qwen3 --tokens 300 --reps 1 --warmup 0 > $o/sanitize-route-memcheck.log 2>&1; echo "memcheck route rc=$? $(tail -1 $o/sanitize-route-memcheck.log)"
echo "== sanitizers at $((SECONDS-start)) s"; pack
[ $(left) -gt 40 ] && timeout $(( $(left) - 10 )) $b sweep --pass backward --set $ws --kernels k5_wgrad,k5_wgrad_pingpong --out $o/wgrad-pp-2.csv > $o/wgrad-pp-2.log 2>&1; echo "== wgrad A/B 2 rc=$? at $((SECONDS-start)) s"
