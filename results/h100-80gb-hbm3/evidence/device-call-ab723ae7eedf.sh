# Next session's first call (H200 wanted; fits an H100). Packs after every section.
# (1) the test command's tests; (2) the backward sets (k5_wgrad and k5_wgrad_pingpong, dgrad)
# with torch in the same run: the ping-pong A/B; (3) if H200: the grid + torch, targets + dense.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-520} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
timeout 170 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout" $o/ctest.log | head; pack
bsets=backward_stages,backward_mixtral,backward_deepseek_v3,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
timeout 150 $b sweep --pass backward --set $bsets --out $o/backward.csv > $o/backward.log 2>&1; echo "== backward rc=$? at $((SECONDS-start)) s"
$b cases --pass backward --set $bsets --kernels torch_grouped_mm_dgrad,torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
timeout 60 python3 harness/peers/torch_grouped_mm.py --csv $o/backward.csv --cases /tmp/bc.csv > $o/backward-torch.log 2>&1; pack
if grep -q H200 $o/gpu.txt; then
  timeout $(( $(left) - 100 )) $b sweep --pass forward --set 'grid*' --kernels k3_wgmma --out $o/grid-default.csv > $o/grid.log 2>&1
  $b cases --pass forward --set 'grid*' --kernels torch_grouped_mm --format csv > /tmp/c2.csv
  timeout $(( $(left) - 10 )) python3 harness/peers/torch_grouped_mm.py --csv $o/grid-default.csv --cases /tmp/c2.csv > $o/grid-torch.log 2>&1
fi
