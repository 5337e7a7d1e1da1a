# Session 7, call 3 (H200 wanted; fits an H100): k5_wgrad_m256 (256-row wgrad tiles) checked,
# sanitized and timed beside k5_wgrad and k5_wgrad_pingpong with torch's wgrad in the same run,
# its profile; then the README test command's tests. Packs after every section.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
split="--m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384"
for args in "" "$split" "--m-list 0,1,63,65,129,0,300 --k 200 --n 72"; do timeout 30 $b run --kernel k5_wgrad_m256 $args --reps 5 --warmup 1 2>&1 | grep -E "check|time:" | paste -s -d' '; done > $o/m256-runs.log; cat $o/m256-runs.log
ws=backward_stages,backward_mixtral,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
timeout 150 $b sweep --pass backward --set $ws --kernels k5_wgrad,k5_wgrad_pingpong,k5_wgrad_m256 --out $o/wgrad-m256.csv > $o/wgrad-m256.log 2>&1; echo "== A/B rc=$? at $((SECONDS-start)) s"
$b cases --pass backward --set $ws --kernels torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
timeout 40 python3 harness/peers/torch_grouped_mm.py --csv $o/wgrad-m256.csv --cases /tmp/bc.csv > $o/wgrad-m256-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"; pack
timeout 40 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum -k regex:wgrad --launch-count 1 $b run --kernel k5_wgrad_m256 --reps 1 --warmup 0 > $o/ncu_k5_wgrad_m256.txt 2>&1
for tool in memcheck synccheck racecheck; do
  timeout 30 compute-sanitizer --tool $tool $b run --kernel k5_wgrad_m256 $split --reps 1 --warmup 0 > $o/sanitize-m256-$tool.log 2>&1; echo "$tool m256 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $o/sanitize-m256-$tool.log | tail -1)"
done; echo "== sanitizers at $((SECONDS-start)) s"; pack
timeout $(( $(left) - 5 )) ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head
