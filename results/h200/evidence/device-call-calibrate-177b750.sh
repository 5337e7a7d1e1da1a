#!/bin/bash
# device call B (issue 26, at commit $1): build (test preset, no ablations), ggemm calibrate, the GPU
# edge-shape tests (K tails, > 256 experts), the default k3_wgmma on the whole grid with the fresh calibration,
# torch on the grid, the choosable configurations on the grid shapes call A did not reach, sanitizers.
set -u
NEW=$1; t0=$SECONDS; export GG_COMMIT=$NEW
left() { echo $((590 - (SECONDS - t0))); }
mkdir -p /tmp/chk; for f in .deps/*.deb; do dpkg -x $f /tmp/chk; done; L=/tmp/chk/usr/lib/x86_64-linux-gnu
sed -i "s|^prefix=.*|prefix=/tmp/chk/usr|" $L/pkgconfig/*.pc; export PKG_CONFIG_PATH=$L/pkgconfig LD_LIBRARY_PATH=$L PATH=/tmp/chk/usr/bin:$PATH
cmake --preset test --log-level=NOTICE > /tmp/cfg.log 2>&1 && cmake --build --preset test -j16 > $OUT/build.log 2>&1 || { echo BUILD FAILED; tail -30 $OUT/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
build/bin/ggemm calibrate --out $OUT/calibration.csv 2> $OUT/calibrate.log; echo "calibrate rc $? at $((SECONDS - t0)) s"; cat $OUT/calibrate.log | tail -12
export GG_CALIBRATION=$OUT/calibration.csv
CK_RUN_CASE=edge_shapes CK_FORK=no timeout 170 build/bin/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? at $((SECONDS - t0)) s"; tail -4 $OUT/test_gpu.log
timeout $(( $(left) - 300 )) build/bin/ggemm sweep --set 'grid*' --kernels k3_wgmma --out $OUT/grid_default.csv > $OUT/grid_default.log 2>&1; echo "default rc $? at $((SECONDS - t0)) s"
cases=$(mktemp); build/bin/ggemm cases --set 'grid*' --kernels torch_grouped_mm --format csv > $cases
timeout $(( $(left) - 170 )) python3 harness/peers/torch_grouped_mm.py --csv $OUT/grid_default.csv --cases $cases > $OUT/torch.log 2>&1; echo "torch rc $? at $((SECONDS - t0)) s"
SETS=grid_llama4_maverick_up,grid_llama4_maverick_down,grid_gpt_oss_120b_up,grid_gpt_oss_120b_down,grid_arctic_up,grid_arctic_down,grid_glm45_up,grid_glm45_down,grid_qwen3_coder_480b_up,grid_qwen3_coder_480b_down,grid_deepseek_v3_up,grid_deepseek_v3_down,grid_kimi_k2_up,grid_kimi_k2_down,grid_qwen3_next_80b_up,grid_qwen3_next_80b_down
timeout $(( $(left) - 90 )) build/bin/ggemm sweep --set $SETS --kernels 'k3_wgmma_coop*,k3_wgmma_pingpong*' --reps 15 --warmup 3 --out $OUT/grid_rest.csv > $OUT/grid_rest.log 2>&1; echo "rest rc $? at $((SECONDS - t0)) s"
timeout 45 build/bin/ggemm fuzz --kernels k3_wgmma,k3_wgmma_pingpong_m64_n192,k3_wgmma_coop_m128_n256,k3_wgmma_coop_m64_n128 --cases 40 --seed 26 > $OUT/fuzz.log 2>&1; echo "fuzz rc $?"; tail -6 $OUT/fuzz.log
for k in k3_wgmma_pingpong_m64_n192 k3_wgmma_coop_m128_n256; do
  timeout 15 compute-sanitizer --tool memcheck --error-exitcode 9 build/bin/ggemm run --kernel $k --tokens 3000 --experts 384 --k 1080 --n 392 --skew 1 --reps 1 --warmup 0 >> $OUT/sanitize.log 2>&1; echo "memcheck $k rc $?"
done
echo "total $((SECONDS - t0)) s"
