# Session 6, call A: the README's test command's tests on the GPU at the head of main (first since
# the cp.async default and X's map change); issue 27's layer on every model at T=4096 with eager
# torch and Liger in the same run (never run this round); the three models at T=256/16384 with the
# cp.async default back. ONE tar back.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-575} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"
b=build/bin/ggemm
timeout 170 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head
timeout $(( $(left) - 200 )) $b moe --model all --tokens 4096 --out $o/moe.csv > $o/moe.log 2>&1; echo "== moe rc=$? at $((SECONDS-start)) s"
$b moe --model all --tokens 4096 --list > /tmp/m1.txt
timeout $(( $(left) - 140 )) python3 harness/peers/torch_moe.py --csv $o/moe.csv --cases /tmp/m1.txt > $o/moe-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"
$b moe --model mixtral,qwen3,olmoe --tokens 4096 --list > /tmp/m2.txt
timeout $(( $(left) - 50 )) python3 harness/peers/liger_moe.py --csv $o/moe.csv --cases /tmp/m2.txt > $o/moe-liger.log 2>&1; echo "== liger rc=$? at $((SECONDS-start)) s"
[ $(left) -gt 30 ] && timeout $(( $(left) - 8 )) $b moe --model mixtral,qwen3,olmoe --tokens 16384,256 --out $o/moe-ends.csv > $o/moe-ends.log 2>&1; echo "== moe ends rc=$? at $((SECONDS-start)) s"
