# Session 34's first call (any sm_90 GPU): the dgrad configurations of session 33 and the split-tail dgrad
# (k5_dgrad_tail_m128_n192/_n256, this session), checked before anything is timed: (1) test_gpu's default
# cases for every registered kernel (edge shapes, K tails, graph replay, traces; the new dgrad_tail_split test:
# 13- and 20-CTA grids, 2 to 4 pieces per tail tile, each shape launched twice); (2) memcheck, racecheck,
# synccheck on the two tail kernels (their sanitize.sh cases include a split on 13 CTAs) and one configuration
# of each k3 template. Prediction: all pass; sanitizers report nothing. Then e101.sh times them.
source .devscripts/pro.sh
timeout $(( $(left) - 200 )) ctest --test-dir build -R '^gpu_edge_shapes$' --output-on-failure \
  > $o/gpu-tests-$GG_COMMIT.log 2>&1
say "gpu tests rc=$?"; grep -E 'Checks|Failures|tail|%' $o/gpu-tests-$GG_COMMIT.log | tail -5; pack
export GG_COMPUTE_SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout $(( $(left) - 10 )) sh tests/sanitize.sh build k5_dgrad_tail_m128_n256 k5_dgrad_tail_m128_n192 \
  k5_dgrad_pingpong_m128_n192 k5_dgrad_coop_m64_n128 > $o/sanitize-dgrad-$GG_COMMIT.log 2>&1
say "sanitize dgrad rc=$?"; tail -5 $o/sanitize-dgrad-$GG_COMMIT.log; pack
