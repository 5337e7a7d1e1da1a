# Session 2026-12-05 (4), the one call the budget allows: the README's test command whole on the
# H200, then issue 26's grid (entry point + torch, one run) and worklog targets (every built
# configuration, dense cuBLAS, torch), then issue 28's backward sets + torch, each cut to the time left.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS
left() { echo $((${CALL_LIMIT:-540} - SECONDS + start)); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
b=build/bin/ggemm
timeout 150 ctest --preset test -j 8 > $OUT/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|\*\*\*|Not Run" $OUT/ctest.log | head -12
timeout $(( $(left) - 240 )) $b sweep --pass forward --set 'grid*' --kernels k3_wgmma --out $OUT/grid-default.csv > $OUT/grid.log 2>&1; echo "== grid rc=$? at $((SECONDS-start)) s"; tail -1 $OUT/grid.log
$b cases --pass forward --set 'grid*' --kernels torch_grouped_mm --format csv > /tmp/c2.csv
timeout $(( $(left) - 150 )) python3 harness/peers/torch_grouped_mm.py --csv $OUT/grid-default.csv --cases /tmp/c2.csv > $OUT/grid-torch.log 2>&1; echo "== grid torch rc=$? at $((SECONDS-start)) s"; tail -1 $OUT/grid-torch.log
sets=stages,dense
[ $(left) -gt 100 ] && timeout $(( $(left) - 80 )) $b sweep --pass forward --set $sets --out $OUT/targets.csv > $OUT/targets.log 2>&1; echo "== targets rc=$? at $((SECONDS-start)) s"; tail -1 $OUT/targets.log
$b cases --pass forward --set $sets --kernels torch_grouped_mm --format csv > /tmp/c1.csv
[ $(left) -gt 60 ] && timeout 50 python3 harness/peers/torch_grouped_mm.py --csv $OUT/targets.csv --cases /tmp/c1.csv > $OUT/targets-torch.log 2>&1; echo "== targets torch rc=$? at $((SECONDS-start)) s"
bsets=backward_stages,backward_mixtral,backward_deepseek_v3,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
[ $(left) -gt 45 ] && timeout $(( $(left) - 25 )) $b sweep --pass backward --set $bsets --out $OUT/backward.csv > $OUT/backward.log 2>&1; echo "== backward rc=$? at $((SECONDS-start)) s"; tail -1 $OUT/backward.log
$b cases --pass backward --set $bsets --kernels torch_grouped_mm_dgrad,torch_grouped_mm_wgrad --format csv > /tmp/bc.csv
[ $(left) -gt 15 ] && timeout $(( $(left) - 3 )) python3 harness/peers/torch_grouped_mm.py --csv $OUT/backward.csv --cases /tmp/bc.csv > $OUT/backward-torch.log 2>&1; echo "== backward torch rc=$? at $((SECONDS-start)) s"
