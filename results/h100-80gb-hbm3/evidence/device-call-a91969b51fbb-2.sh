# Next session's first call (any card; say which came). (1) the README test command's tests:
# the layer's GPU tests now run k5_wgrad_m256_dyn inside the backward; (2) the layer backward at
# T = 4096 on the three target models with eager torch autograd in the same run; (3) the backward
# sets (DeepSeek-V3-like last: a minute a row) with every wgrad twin and torch's two forms.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; head -2 $o/gpu.txt | tail -1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
timeout 200 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head; pack
m=mixtral,qwen3,olmoe
timeout 90 $b moe --model $m --tokens 4096 --backward --unfused --out $o/moe_backward.csv > $o/moe_backward.log 2>&1; echo "== moe backward rc=$? at $((SECONDS-start)) s"
$b moe --model $m --tokens 4096 --backward --list > /tmp/m3.txt
timeout 90 python3 harness/peers/torch_moe.py --csv $o/moe_backward.csv --cases /tmp/m3.txt --backward > $o/moe_backward-torch.log 2>&1; echo "== torch backward rc=$? at $((SECONDS-start)) s"; pack
bsets=backward_stages,backward_mixtral,backward_qwen3_30b_a3b,backward_olmoe,backward_decode,backward_deepseek_v3
timeout $(( $(left) - 70 )) $b sweep --pass backward --set $bsets --out $o/backward.csv > $o/backward.log 2>&1; echo "== backward rc=$? at $((SECONDS-start)) s"; tail -1 $o/backward.log; pack
$b cases --pass backward --set $bsets --kernels torch_grouped_mm_dgrad,torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
timeout $(( $(left) - 5 )) python3 harness/peers/torch_grouped_mm.py --csv $o/backward.csv --cases /tmp/bc.csv > $o/backward-torch.log 2>&1; echo "== backward torch rc=$? at $((SECONDS-start)) s"
