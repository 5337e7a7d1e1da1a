# Call 1: build, the README's test command, the DeepSeek-V3-like router over seeds, sanitizers on k5.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS
left() { echo $((${CALL_LIMIT:-575} - SECONDS + start)); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
timeout $(( $(left) - 90 )) cmake --workflow --preset test > $OUT/workflow.log 2>&1; echo "== workflow rc=$? at $((SECONDS-start)) s"
grep -E "tests passed|\(Failed\)|Timeout|Not Run|Skipped" $OUT/workflow.log | head -20
for s in 1 2; do [ $(left) -gt 30 ] || break; timeout 40 build/bin/ggemm moe --experts 256 --topk 8 --d 7168 --f 2048 --tokens 1024 --seed $s --reps 2 --warmup 1; echo "seed $s rc=$?"; done > $OUT/deepseek-seeds.log 2>&1
echo "== seeds at $((SECONDS-start)) s"; grep -E "rc=|check|FAIL|fail" $OUT/deepseek-seeds.log | head -20
[ $(left) -gt 40 ] && timeout $(left) tests/sanitize.sh build k5_dgrad k5_wgrad > $OUT/sanitize-k5.log 2>&1; echo "== sanitize k5 rc=$? at $((SECONDS-start)) s"
tail -5 $OUT/sanitize-k5.log
