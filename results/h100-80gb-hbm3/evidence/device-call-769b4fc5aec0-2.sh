# Session 10, H100 call 2: the README's test command's tests at HEAD (the read-only ceiling new),
# ggemm ceilings, then issue 26: calibrate on this H100, the grid's entry point with the H100's own
# constants and torch, then the grid's configurations while time is left.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o6; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; tail -1 $o/gpu.txt
cmake --preset test >/dev/null 2>&1 && cmake --build --preset test -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
timeout 150 ctest --preset test -j 8 > $o/ctest.log 2>&1; echo "== ctest rc=$? at $((SECONDS-start)) s"; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $o/ctest.log | head; pack
$b ceilings > $o/ceilings.log 2>&1; cat $o/ceilings.log
timeout 150 $b calibrate --out $o/calibration.csv > $o/calibrate.log 2>&1; echo "== calibrate rc=$? at $((SECONDS-start)) s"; pack
[ -s $o/calibration.csv ] && export GG_CALIBRATION=$o/calibration.csv
timeout 70 $b sweep --pass forward --set 'grid*' --kernels k3_wgmma --out $o/grid-default.csv 2> $o/grid.log; echo "== grid rc=$? at $((SECONDS-start)) s"
$b cases --pass forward --set 'grid*' --kernels torch_grouped_mm --format csv > /tmp/c2.csv
timeout 40 python3 harness/peers/torch_grouped_mm.py --csv $o/grid-default.csv --cases /tmp/c2.csv > $o/grid-torch.log 2>&1; echo "== grid torch rc=$? at $((SECONDS-start)) s"; pack
[ $(left) -gt 30 ] && timeout $(( $(left) - 3 )) $b sweep --pass forward --set 'grid*' --kernels 'k3_wgmma_coop*,k3_wgmma_pingpong*' --out $o/grid-configs.csv 2> $o/grid-configs.log; echo "== grid configs rc=$? at $((SECONDS-start)) s"
