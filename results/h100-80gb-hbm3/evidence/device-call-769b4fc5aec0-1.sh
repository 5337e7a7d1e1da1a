# Session 10, call 1: which card came decides the work. H200: run.sh's forward part at HEAD (s10a).
# H100: the wgrad chunk A/B (s10d), whose prediction is on record in k5 TRIALS.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "card: $name"
case "$name" in *H200*) bash .devscripts/s13.sh ;; *) bash .devscripts/s10d.sh ;; esac
# Next session, an A/B call (issue 28; the k5-wgrad-rule trial, prediction on record in k5 TRIALS):
# the 256-row wgrad tile's list cut at the twin's chunk (the chunk rule counting 128-row tiles),
# two builds, two interleaved rounds each, on the worklog's cases, the skew grid and the models.
source .devscripts/setup.sh
export GG_COMMIT=$(cat .devscripts/commit)
start=$SECONDS; o=/tmp/o4; rm -rf $o; mkdir -p $o
left() { echo $((${CALL_LIMIT:-560} - SECONDS + start)); }
pack() { tar czf $OUT/out.tgz -C $o .; }
trap pack EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > $o/gpu.txt 2>&1; tail -1 $o/gpu.txt
sets=backward_stages,backward_skew,backward_mixtral,backward_qwen3_30b_a3b,backward_olmoe,backward_decode
ks=k5_wgrad_m256_dyn,k5_wgrad_pingpong_dyn
build() { cmake --preset release >/dev/null && cmake --build --preset release -j 16 --target ggemm > $o/build-$1.log 2>&1 || { tail -30 $o/build-$1.log; exit 1; }; cp build/bin/ggemm /tmp/ggemm-$1; }
build base
sed -i 's|p.chunk = gg_wgrad_chunk(tokens, experts, p.tiles, ctas);|p.chunk = gg_wgrad_chunk(tokens, experts, gg_wgrad_cdiv(k, 128) * p.n_blocks, ctas);|' common/gg_wgrad.h
grep -n "p.chunk = " common/gg_wgrad.h > $o/patch.txt; build new
/tmp/ggemm-new tiles --kernel k5_wgrad_m256_dyn --skew 2 | head -1 > $o/tiles-new.txt
echo "== built both at $((SECONDS-start)) s"
for r in 1 2; do for side in base new; do
  [ $(left) -lt 60 ] && break 2
  timeout $(( $(left) < 110 ? $(left) - 40 : 110 )) /tmp/ggemm-$side sweep --pass backward --set $sets --kernels $ks --out $o/ab-$side-$r.csv 2> $o/ab-$side-$r.log; echo "== $side $r rc=$? at $((SECONDS-start)) s"; tail -1 $o/ab-$side-$r.log
done; pack; done
timeout 30 /tmp/ggemm-new run --kernel k5_wgrad_m256_dyn --m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384 > $o/edge-new.log 2>&1; echo "== edge rc=$?"
git checkout common/gg_wgrad.h
