# Session 5, call 3: (a) k5_wgrad 128 x 192 (default) against 128 x 256 tiles (an ablation build,
# -DK5_WGRAD_TILE_N=256), interleaved, on the worklog and two model sets; (b) issue 27: the layer
# on every model at T=4096 with eager torch and Liger in the same run, then T=256 and 16384 on the
# targets' three models as time allows. ONE tar back.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-570} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1
cmake --preset test >/dev/null 2>&1 && (cmake --build --preset test -j 10 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }) &
(cmake --preset test -B build256 -DCMAKE_C_FLAGS=-DK5_WGRAD_TILE_N=256 -DCMAKE_CUDA_FLAGS=-DK5_WGRAD_TILE_N=256 > $o/build256.log 2>&1 && cmake --build build256 -j 6 --target ggemm >> $o/build256.log 2>&1) &
wait; echo "== built in $((SECONDS-start)) s"; tail -2 $o/build256.log
b=build/bin/ggemm
ws=backward_stages,backward_mixtral,backward_deepseek_v3
for r in 1 2; do for v in build build256; do timeout 60 $v/bin/ggemm sweep --pass backward --set $ws --kernels k5_wgrad --out $o/wgrad-$v-$r.csv > $o/wgrad-$v-$r.log 2>&1; done; done
echo "== wgrad A/B at $((SECONDS-start)) s"
timeout $(( $(left) - 200 )) $b moe --model all --tokens 4096 --out $o/moe.csv > $o/moe.log 2>&1; echo "== moe rc=$? at $((SECONDS-start)) s"
$b moe --model all --tokens 4096 --list > /tmp/m1.txt
timeout $(( $(left) - 150 )) python3 harness/peers/torch_moe.py --csv $o/moe.csv --cases /tmp/m1.txt > $o/moe-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"
$b moe --model mixtral,qwen3,olmoe --tokens 4096 --list > /tmp/m2.txt
timeout $(( $(left) - 60 )) python3 harness/peers/liger_moe.py --csv $o/moe.csv --cases /tmp/m2.txt > $o/moe-liger.log 2>&1; echo "== liger rc=$? at $((SECONDS-start)) s"
[ $(left) -gt 40 ] && timeout $(( $(left) - 10 )) $b moe --model mixtral,qwen3,olmoe --tokens 256,16384 --out $o/moe-ends.csv > $o/moe-ends.log 2>&1; echo "== moe ends rc=$? at $((SECONDS-start)) s"
