# Session 33's first call (any sm_90 GPU: on an H200 after e71.sh-e73.sh, on an H100 first): dgrad on k3's
# configurations, built without a GPU (k5_backward/TRIALS.md, "dgrad on k3's configurations", has the
# prediction), checked before it is timed: (1) test_gpu's default cases (edge, tail, graph replay, trace) for
# every registered kernel, the nine k5_dgrad_<config> and the k5_dgrad entry point among them; (2) memcheck,
# racecheck and synccheck on one configuration of each kernel template (steps 2, 3 and 4; coop_m128_n256 is
# the old k5_dgrad's SASS), on sanitize.sh's ragged problem with k = 392 for dgrad (a partial column block of
# dA at every width). Then e101.sh times them.
source .devscripts/pro.sh
timeout $(( $(left) - 150 )) ctest --test-dir build -R '^gpu_edge_shapes$' --output-on-failure \
  > $o/gpu-tests-$GG_COMMIT.log 2>&1
say "gpu tests rc=$?"; pack
export GG_COMPUTE_SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout $(( $(left) - 10 )) sh tests/sanitize.sh build k5_dgrad_coop_m128_n192 k5_dgrad_coop_m64_n128 \
  k5_dgrad_pingpong_m128_n192 k5_dgrad_pingpong_m64_n128 > $o/sanitize-dgrad-$GG_COMMIT.log 2>&1
say "sanitize dgrad rc=$?"; pack
