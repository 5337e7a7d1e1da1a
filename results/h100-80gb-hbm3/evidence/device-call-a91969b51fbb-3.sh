# Session 9, call 3 (issue 27): the layer as run.sh makes moe.csv (k4 fused and unfused, eager torch,
# Liger), then the layer backward again with Liger's backward beside torch's. ONE tar back.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit) TRITON_CACHE_DIR=/tmp/triton
start=$SECONDS; o=/tmp/o3; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; tail -1 $o/gpu.txt
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
t=256,4096,16384
timeout 200 $b moe --model all --tokens $t --out $o/moe.csv > $o/moe.log 2>&1; echo "== moe rc=$? at $((SECONDS-start)) s"
$b moe --model all --tokens $t --list > /tmp/m1.txt
timeout 100 python3 harness/peers/torch_moe.py --csv $o/moe.csv --cases /tmp/m1.txt > $o/moe-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"; pack
timeout $(( $(left) - 90 )) python3 harness/peers/liger_moe.py --csv $o/moe.csv --cases /tmp/m1.txt > $o/moe-liger.log 2>&1; echo "== liger rc=$? at $((SECONDS-start)) s"; pack
m=mixtral,qwen3,olmoe
[ $(left) -gt 80 ] && timeout 60 $b moe --model $m --tokens 4096 --backward --unfused --out $o/moe_backward.csv > $o/moe_backward.log 2>&1; echo "== moe backward rc=$? at $((SECONDS-start)) s"
$b moe --model $m --tokens 4096 --backward --list > /tmp/m3.txt
[ $(left) -gt 20 ] && timeout $(( $(left) - 5 )) python3 harness/peers/liger_moe.py --backward --csv $o/moe_backward.csv --cases /tmp/m3.txt > $o/moe_backward-liger.log 2>&1; echo "== liger backward rc=$? at $((SECONDS-start)) s"
