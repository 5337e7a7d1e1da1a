# Session 33's second call, after e100.sh on the same machine: dgrad on k3's configurations, timed (the
# prediction: k5_backward/TRIALS.md, "dgrad on k3's configurations"). (1) The backward sets' dgrad, k5_dgrad*
# (the entry point beside its nine configurations), two rounds, each run checked; (2) the forward's entry point on
# the same shapes, two rounds, the target's other side in the same call; (3) torch's dgrad form on the backward
# cases; (4) the layer's backward at T = 4096 on the three target layers (its expert and router dgrads now go
# through the entry point), checked and timed, as run.sh runs it.
source .devscripts/pro.sh
sets=backward_stages,backward_mixtral,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
timeout $(( $(left) > 400 ? 240 : $(left) - 160 )) $b sweep --pass dgrad --set $sets --rounds 2 \
  --out $o/dgrad-$GG_COMMIT.csv > $o/dgrad-$GG_COMMIT.log 2>&1; say "dgrad sweep rc=$?"; pack
[ $(left) -gt 150 ] && { timeout 60 $b sweep --set stages,mixtral,qwen3_30b_a3b,olmoe,decode --kernels k3_wgmma \
    --rounds 2 --out $o/forward-$GG_COMMIT.csv > $o/forward-$GG_COMMIT.log 2>&1; say "forward sweep rc=$?"; pack; }
[ $(left) -gt 100 ] && { c=$(mktemp); $b cases --set $sets --pass dgrad --kernels torch_grouped_mm_dgrad --format csv > $c
  timeout 90 python3 harness/peers/torch_grouped_mm.py --csv $o/dgrad-$GG_COMMIT.csv --cases $c \
    > $o/dgrad-torch-$GG_COMMIT.log 2>&1; say "torch dgrad rc=$?"; pack; }
[ $(left) -gt 60 ] && { timeout $(( $(left) - 10 )) $b moe --model mixtral,qwen3,olmoe --tokens 4096 --unfused --backward \
    --out $o/moe-backward-$GG_COMMIT.csv > $o/moe-backward-$GG_COMMIT.log 2>&1; say "layer backward rc=$?"; pack; }
grep -c ',fail' $o/*.csv
