# Session 9, call 1 (issue 26): the main job's forward sweep as run.sh makes it (release build with
# ablations; every forward set but the validation grid; ggemm list; the torch peer), then the grid:
# the entry point and torch in one run. ONE tar back.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-555} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; tail -1 $o/gpu.txt
cmake --preset release -DGG_ABLATIONS=ON --log-level=NOTICE >/dev/null && cmake --build --preset release -j 16 > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "== built in $((SECONDS-start)) s"; b=build/bin/ggemm
sets=stages,dense,skew,mixtral,deepseek_v3,qwen3_30b_a3b,olmoe,decode
timeout 200 $b sweep --pass forward --set $sets --out $o/sweep.csv 2> $o/sweep.log; echo "== sweep rc=$? at $((SECONDS-start)) s"; tail -1 $o/sweep.log
$b list --format csv > $o/kernels.csv
$b cases --pass forward --set $sets --kernels torch_grouped_mm --format csv > /tmp/c1.csv
timeout 90 python3 harness/peers/torch_grouped_mm.py --csv $o/sweep.csv --cases /tmp/c1.csv > $o/sweep-torch.log 2>&1; echo "== torch rc=$? at $((SECONDS-start)) s"; pack
timeout $(( $(left) - 110 )) $b sweep --pass forward --set 'grid*' --kernels k3_wgmma --out $o/grid-default.csv 2> $o/grid.log; echo "== grid rc=$? at $((SECONDS-start)) s"; tail -1 $o/grid.log; pack
$b cases --pass forward --set 'grid*' --kernels torch_grouped_mm --format csv > /tmp/c2.csv
timeout $(( $(left) - 3 )) python3 harness/peers/torch_grouped_mm.py --csv $o/grid-default.csv --cases /tmp/c2.csv > $o/grid-torch.log 2>&1; echo "== grid torch rc=$? at $((SECONDS-start)) s"
