source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS
left() { echo $((${CALL_LIMIT:-330} - SECONDS + start)); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
b=build/bin/ggemm
for k in 8 40; do for s in 804 1 3; do timeout 30 $b moe --backward --experts 256 --topk $k --d 64 --f 128 --tokens 100 --seed $s --reps 1 --warmup 0 2>&1 | grep -E "backward" | sed "s/^/topk $k seed $s: /"; done; done > $OUT/topk-seeds.log 2>&1
echo "== seeds at $((SECONDS-start)) s"; grep -oE "^topk [0-9]+ seed [0-9]+:|fp32/fp64 reference: [^;)]*|, the [a-zA-Z0-9 ]* reference [^)]*" $OUT/topk-seeds.log | paste -s -d' ' | sed 's/topk/\ntopk/g'
echo
CK_RUN_CASE=moe timeout 60 build/bin/test_gpu > $OUT/test-moe.log 2>&1; echo "== test_gpu moe rc=$? at $((SECONDS-start)) s"; grep -E "%:|worst error" $OUT/test-moe.log | tail -3
timeout 70 tests/sanitize.sh build k5_wgrad > $OUT/sanitize-k5_wgrad.log 2>&1; echo "== sanitize wgrad rc=$? at $((SECONDS-start)) s"; grep -E "SUMMARY|rror|option" $OUT/sanitize-k5_wgrad.log | sort | uniq -c | head
[ $(left) -gt 30 ] && timeout $(( $(left) - 10 )) ctest --preset test -j 8 -E "gpu_edge_shapes" > $OUT/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|\*\*\*" $OUT/ctest.log | head
