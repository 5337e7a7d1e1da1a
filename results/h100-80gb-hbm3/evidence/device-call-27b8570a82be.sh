# Diagnostics call: build (test preset), racecheck report on wgrad's split case, the top-k 40 layer
# over seeds and top-k, every moe edge layer with margins, the k3 widths A/B, the backward sweep.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS
left() { echo $((${CALL_LIMIT:-575} - SECONDS + start)); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
b=build/bin/ggemm
timeout 90 compute-sanitizer --tool racecheck --print-level info $b run --kernel k5_wgrad --m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384 --reps 1 --warmup 0 > $OUT/racecheck-split.log 2>&1
echo "== racecheck rc=$? at $((SECONDS-start)) s"; grep -c "Race reported\|hazard" $OUT/racecheck-split.log; grep -m6 -E "^========= +(Error|Warning|Write|Read|at|Race)" $OUT/racecheck-split.log
for k in 8 32 40; do for s in 804 1 2 3; do timeout 30 $b moe --backward --experts 256 --topk $k --d 64 --f 128 --tokens 100 --seed $s --reps 1 --warmup 0 2>&1 | grep -E "backward|check" | sed "s/^/topk $k seed $s: /"; done; done > $OUT/topk-seeds.log 2>&1
echo "== topk seeds at $((SECONDS-start)) s"; grep -oE "topk [0-9]+ seed [0-9]+:|worst error / bound[^;)]*" $OUT/topk-seeds.log | paste - - | head -20
CK_RUN_CASE=moe timeout 150 build/bin/test_gpu > $OUT/test-moe.log 2>&1; echo "== test_gpu moe rc=$? at $((SECONDS-start)) s"; grep -E "%:|worst error" $OUT/test-moe.log | grep -E "dW1 (1|[2-9])|%" | head
for n in 6912 7168 7296; do for c in pingpong_m128_n192 coop_m128_n256; do timeout 30 $b run --kernel k3_wgmma_$c --tokens 8192 --experts 384 --k 2048 --n $n --skew 0.5 --reps 10 --warmup 2; done; done > $OUT/widths.log 2>&1; echo "== widths at $((SECONDS-start)) s"
[ $(left) -gt 60 ] && timeout $(( $(left) - 30 )) $b sweep --pass backward --set backward_stages --reps 10 --warmup 2 --out $OUT/backward.csv > $OUT/backward.log 2>&1; echo "== backward rc=$? at $((SECONDS-start)) s"
