# Session 33's call (any sm_90 GPU: on an H200 after e71.sh-e73.sh, on an H100 first): dgrad on k3's
# configurations, built without a GPU (k5_backward/TRIALS.md, "dgrad on k3's configurations", has the
# prediction). (1) test_gpu's default cases (edge, tail, graph replay, trace) for every registered kernel, the
# nine k5_dgrad_<config> twins and the k5_dgrad entry point among them; (2) memcheck, racecheck and synccheck on
# one twin of each kernel template (step 2, 3 and 4; coop_m128_n256 is the old k5_dgrad's SASS); (3) the
# backward sets' dgrad (k5_dgrad* : the entry point beside its nine twins) and the forward's entry point on the
# same shapes, two rounds each, then torch's dgrad form on the backward cases; (4) the layer's backward, whose two
# expert dgrads and the router's now go through the entry point, at T = 4096 on the three target layers, checked.
source .devscripts/pro.sh
timeout 400 ctest --test-dir build -R '^gpu_edge_shapes$' --output-on-failure > $o/gpu-tests-$GG_COMMIT.log 2>&1
say "gpu tests rc=$?"; pack
export GG_COMPUTE_SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 180 sh tests/sanitize.sh build k5_dgrad_coop_m128_n192 k5_dgrad_coop_m64_n128 k5_dgrad_pingpong_m128_n192 \
  k5_dgrad_pingpong_m64_n128 > $o/sanitize-dgrad-$GG_COMMIT.log 2>&1
say "sanitize dgrad twins rc=$?"; pack
sets=backward_stages,backward_mixtral,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
[ $(left) -gt 120 ] && { timeout $(( $(left) > 260 ? 200 : $(left) - 60 )) $b sweep --pass dgrad --set $sets --rounds 2 \
    --out $o/dgrad-$GG_COMMIT.csv > $o/dgrad-$GG_COMMIT.log 2>&1; say "dgrad sweep rc=$?"; pack; }
[ $(left) -gt 90 ] && { timeout $(( $(left) - 50 )) $b sweep --set stages,mixtral,qwen3_30b_a3b,olmoe,decode --kernels k3_wgmma \
    --rounds 2 --out $o/forward-$GG_COMMIT.csv > $o/forward-$GG_COMMIT.log 2>&1; say "forward sweep rc=$?"; pack; }
[ $(left) -gt 40 ] && { c=$(mktemp); $b cases --set $sets --pass dgrad --kernels torch_grouped_mm_dgrad --format csv > $c
  timeout $(( $(left) - 10 )) python3 harness/peers/torch_grouped_mm.py --csv $o/dgrad-$GG_COMMIT.csv --cases $c \
    > $o/dgrad-torch-$GG_COMMIT.log 2>&1; say "torch dgrad rc=$?"; pack; }
[ $(left) -gt 60 ] && { timeout $(( $(left) - 10 )) $b moe --model mixtral,qwen3,olmoe --tokens 4096 --unfused --backward \
    --out $o/moe-backward-$GG_COMMIT.csv > $o/moe-backward-$GG_COMMIT.log 2>&1; say "layer backward rc=$?"; pack; }
grep -c ',fail' $o/*.csv
