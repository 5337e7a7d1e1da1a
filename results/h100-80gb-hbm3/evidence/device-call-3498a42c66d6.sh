# Next session's first call (H200; fits an H100). Everything under /tmp/o, returned as ONE tar
# (the device tool returns at most eight files). Order = priority; each step cut to the time left.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/o/triton
start=$SECONDS; o=/tmp/o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-570} - SECONDS + start)); }
pack() { rm -rf $o/triton; tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
b=build/bin/ggemm
timeout 150 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head
# k5_wgrad's per-block gap behind dgrad (k5_backward/TRIALS.md): ncu on both at the 16k case, traces
for k in k5_dgrad k5_wgrad; do timeout 60 ncu --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active -k regex:"wgrad_kernel|dgrad_kernel" --launch-count 1 $b run --kernel $k --reps 1 --warmup 0 > $o/ncu_$k.txt 2>&1; done; echo "== ncu at $((SECONDS-start)) s"
for k in k3_wgmma_coop_m128_n192 k3_wgmma_coop_m128_n256 k5_dgrad k5_wgrad; do timeout 25 $b run --kernel $k --reps 20 --warmup 3 2>&1 | grep -E "time:|check" | paste -s -d' ' | sed "s/^/$k: /"; done > $o/widths-16k.log
for k in k5_dgrad k5_wgrad; do timeout 25 $b trace --kernel $k --tokens 16384 --experts 64 --k 1024 --n 2688 --out $o/trace_$k > $o/trace_$k.log 2>&1; rm -f $o/trace_$k/trace.json; done
# issue 26: the grid's entry point + torch in one run; the worklog targets with dense cuBLAS + torch
timeout $(( $(left) - 300 )) $b sweep --pass forward --set 'grid*' --kernels k3_wgmma --out $o/grid-default.csv > $o/grid.log 2>&1; echo "== grid rc=$? at $((SECONDS-start)) s"
$b cases --pass forward --set 'grid*' --kernels torch_grouped_mm --format csv > /tmp/c2.csv
timeout $(( $(left) - 220 )) python3 harness/peers/torch_grouped_mm.py --csv $o/grid-default.csv --cases /tmp/c2.csv > $o/grid-torch.log 2>&1; echo "== grid torch rc=$? at $((SECONDS-start)) s"
sets=stages,dense
timeout $(( $(left) - 170 )) $b sweep --pass forward --set $sets --out $o/targets.csv > $o/targets.log 2>&1; echo "== targets rc=$? at $((SECONDS-start)) s"
$b cases --pass forward --set $sets --kernels torch_grouped_mm --format csv > /tmp/c1.csv
timeout 40 python3 harness/peers/torch_grouped_mm.py --csv $o/targets.csv --cases /tmp/c1.csv > $o/targets-torch.log 2>&1
# issue 28: the backward sets + torch in the same call as the forward targets above
bsets=backward_stages,backward_mixtral,backward_deepseek_v3,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
[ $(left) -gt 60 ] && timeout $(( $(left) - 45 )) $b sweep --pass backward --set $bsets --out $o/backward.csv > $o/backward.log 2>&1; echo "== backward rc=$? at $((SECONDS-start)) s"
$b cases --pass backward --set $bsets --kernels torch_grouped_mm_dgrad,torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
[ $(left) -gt 20 ] && timeout $(( $(left) - 8 )) python3 harness/peers/torch_grouped_mm.py --csv $o/backward.csv --cases /tmp/bc.csv > $o/backward-torch.log 2>&1; echo "== backward torch rc=$? at $((SECONDS-start)) s"
# the sweep's rounds on the grid shapes the model misses (twins within a few per cent, if the rounds work)
[ $(left) -gt 60 ] && timeout $(( $(left) - 10 )) $b sweep --set grid_llama4_scout_up,grid_arctic_down,grid_olmoe_up --kernels 'k3_wgmma*' --rounds 3 --out $o/grid-rounds.csv > $o/grid-rounds.log 2>&1; echo "== rounds rc=$? at $((SECONDS-start)) s"
