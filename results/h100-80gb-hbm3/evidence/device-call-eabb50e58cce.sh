# Session 5, call 2: k5_wgrad's TMA-store epilogue and 32-bit item lookup: correctness (the test
# command's tests, sanitizers on k5_wgrad), then its time against dgrad (unchanged, the in-run
# control) on the 16k case, ncu and a trace, and the backward sets with torch. ONE tar back.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-570} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
b=build/bin/ggemm
for k in k5_dgrad k5_wgrad; do timeout 25 $b run --kernel $k --reps 20 --warmup 3 2>&1 | grep -E "time:|check" | paste -s -d' ' | sed "s/^/$k: /"; done > $o/widths-16k.log; cat $o/widths-16k.log
timeout 150 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout" $o/ctest.log | head
timeout 150 tests/sanitize.sh build k5_wgrad > $o/sanitize-k5_wgrad.log 2>&1; echo "== sanitize rc=$? at $((SECONDS-start)) s"
timeout 60 ncu --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum -k regex:wgrad_kernel --launch-count 1 $b run --kernel k5_wgrad --reps 1 --warmup 0 > $o/ncu_k5_wgrad.txt 2>&1
timeout 25 $b trace --kernel k5_wgrad --tokens 16384 --experts 64 --k 1024 --n 2688 --out $o/trace_k5_wgrad > $o/trace_k5_wgrad.log 2>&1; rm -f $o/trace_k5_wgrad/trace.json; gzip $o/trace_k5_wgrad/trace.csv
echo "== profiled at $((SECONDS-start)) s"
bsets=backward_stages,backward_mixtral,backward_deepseek_v3,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
timeout $(( $(left) - 60 )) $b sweep --pass backward --set $bsets --out $o/backward.csv > $o/backward.log 2>&1; echo "== backward rc=$? at $((SECONDS-start)) s"
$b cases --pass backward --set $bsets --kernels torch_grouped_mm_dgrad,torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
timeout $(( $(left) - 30 )) python3 harness/peers/torch_grouped_mm.py --csv $o/backward.csv --cases /tmp/bc.csv > $o/backward-torch.log 2>&1; echo "== backward torch rc=$? at $((SECONDS-start)) s"
[ $(left) -gt 90 ] && timeout $(( $(left) - 20 )) $b sweep --pass backward --set 'backward_skew*' --kernels k5_wgrad --out $o/backward-skew.csv > $o/backward-skew.log 2>&1; echo "== skew rc=$? at $((SECONDS-start)) s"
