# Session 7, call 4 (H200 wanted; fits an H100): k5_wgrad_pingpong_s5 (one staging box per warp,
# five ring stages) checked, sanitized and timed beside k5_wgrad_pingpong with torch's wgrad in
# the same run; then the README test command's tests on this commit. Packs after every section.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-440} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
split="--m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384"
for args in "" "$split" "--m-list 0,1,63,65,129,0,300 --k 200 --n 72"; do timeout 30 $b run --kernel k5_wgrad_pingpong_s5 $args --reps 5 --warmup 1 2>&1 | grep -E "check|time:" | paste -s -d' '; done > $o/s5-runs.log; cat $o/s5-runs.log
ws=backward_stages,backward_mixtral,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
timeout 120 $b sweep --pass backward --set $ws --kernels k5_wgrad_pingpong,k5_wgrad_pingpong_s5 --out $o/wgrad-s5.csv > $o/wgrad-s5.log 2>&1; echo "== A/B rc=$? at $((SECONDS-start)) s"
$b cases --pass backward --set $ws --kernels torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
timeout 40 python3 harness/peers/torch_grouped_mm.py --csv $o/wgrad-s5.csv --cases /tmp/bc.csv > $o/wgrad-s5-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"; pack
for tool in memcheck synccheck racecheck; do
  timeout 30 compute-sanitizer --tool $tool $b run --kernel k5_wgrad_pingpong_s5 $split --reps 1 --warmup 0 > $o/sanitize-s5-$tool.log 2>&1; echo "$tool s5 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $o/sanitize-s5-$tool.log | tail -1)"
done; echo "== sanitizers at $((SECONDS-start)) s"; pack
timeout $(( $(left) - 5 )) ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head
