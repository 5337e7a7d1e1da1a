# Session 34, a single call for when device time allows one (any sm_90 GPU): the split-tail dgrad checked, then
# timed on the shape it was built for. (1) test_gpu's kernel tests on k5_dgrad* (the nine configurations, the two
# split-tail kernels, the entry point) and k5_wgrad (whose ticket function moved): edge shapes, K tails, graph
# replay, dgrad_tail_split (13- and 20-CTA grids, two launches on one workspace), the traced split (29 SMs);
# (2) memcheck, racecheck, synccheck on k5_dgrad_tail_m128_n256; (3) the Mixtral-like and worklog backward sets'
# dgrad, coop_m128_n256 beside tail_m128_n256 and the entry point, and k3_wgmma's forward on the same shapes, two
# rounds each in this call; (4) the Mixtral-like layer's backward at T = 4096, checked (its expert dgrads now run
# the split-tail kernel). Prediction: k5_backward/TRIALS.md, "dgrad's last wave in pieces".
source .devscripts/pro.sh
GG_TEST_KERNELS='k5_dgrad*,k5_wgrad' CK_RUN_CASE=edge_shapes timeout $(( $(left) > 450 ? 220 : $(left) - 230 )) \
  build/bin/test_gpu > $o/gpu-tests-dgrad-$GG_COMMIT.log 2>&1
say "gpu tests (k5_dgrad*, k5_wgrad) rc=$?"; tail -3 $o/gpu-tests-dgrad-$GG_COMMIT.log; pack
export GG_COMPUTE_SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ $(left) -gt 200 ] && { timeout 110 sh tests/sanitize.sh build k5_dgrad_tail_m128_n256 > $o/sanitize-tail-$GG_COMMIT.log 2>&1
  say "sanitize tail rc=$?"; tail -3 $o/sanitize-tail-$GG_COMMIT.log; pack; }
[ $(left) -gt 100 ] && { timeout $(( $(left) > 180 ? 70 : $(left) - 100 )) $b sweep --pass dgrad --set backward_mixtral,backward_stages \
    --kernels k5_dgrad_coop_m128_n256,k5_dgrad_tail_m128_n256,k5_dgrad --rounds 2 --out $o/dgrad-tail-$GG_COMMIT.csv \
    > $o/dgrad-tail-$GG_COMMIT.log 2>&1; say "dgrad sweep rc=$?"; pack
  timeout 40 $b sweep --set mixtral,stages --kernels k3_wgmma --rounds 2 --out $o/forward-$GG_COMMIT.csv \
    > $o/forward-$GG_COMMIT.log 2>&1; say "forward sweep rc=$?"; pack; }
[ $(left) -gt 40 ] && { timeout $(( $(left) - 10 )) $b moe --model mixtral --tokens 4096 --unfused --backward \
    --out $o/moe-backward-$GG_COMMIT.csv > $o/moe-backward-$GG_COMMIT.log 2>&1; say "layer backward rc=$?"; pack; }
grep -c ',fail' $o/*.csv
