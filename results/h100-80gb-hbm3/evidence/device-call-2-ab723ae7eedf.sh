# Session 7, call 2 (H200 wanted; fits an H100): the layer backward timed with torch autograd in
# the same run (never timed before), the ping-pong wgrad's profile and trace at the 16k case,
# Liger's backward on one layer with what time is left. Packs after every section.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
m=mixtral,qwen3,olmoe
timeout 150 $b moe --model $m --tokens 4096 --backward --unfused --out $o/moe_backward.csv > $o/moe_backward.log 2>&1; echo "== moe backward rc=$? at $((SECONDS-start)) s"
$b moe --model $m --tokens 4096 --backward --list > /tmp/mc.csv
timeout 120 python3 harness/peers/torch_moe.py --csv $o/moe_backward.csv --cases /tmp/mc.csv --backward > $o/moe_backward-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"; pack
timeout 60 ncu --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum -k regex:wgrad --launch-count 1 $b run --kernel k5_wgrad_pingpong --reps 1 --warmup 0 > $o/ncu_k5_wgrad_pingpong.txt 2>&1
timeout 25 $b trace --kernel k5_wgrad_pingpong --tokens 16384 --experts 64 --k 1024 --n 2688 --out $o/trace_pp > $o/trace_pp.log 2>&1; rm -f $o/trace_pp/trace.json; gzip $o/trace_pp/trace.csv
echo "== profiled at $((SECONDS-start)) s"; pack
grep -v '^#' /tmp/mc.csv | head -1 > /tmp/mq.csv; grep -i qwen3 /tmp/mc.csv >> /tmp/mq.csv
timeout $(( $(left) - 10 )) python3 harness/peers/liger_moe.py --csv $o/moe_backward.csv --cases /tmp/mq.csv --backward > $o/moe_backward-liger.log 2>&1; echo "== liger rc=$? at $((SECONDS-start)) s"
