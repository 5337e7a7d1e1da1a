# Setup for the calls after session 33, run from the repository root: session 32's setup (the older chain: .deps,
# .whl and .devscripts with e49.sh to e99.sh, wave.patch, pad.patch and pair.patch), then this folder's e100.sh to
# e102.sh.
# Every call carries .deps, .whl, .devscripts and first writes the commit: git rev-parse --short=12 HEAD >
# .devscripts/commit. Next, on an H200: e102.sh (the README's test command with a limit for today's 36 kernels, then
# the held-out shapes: e71.sh's H200 branch), e72.sh, e73.sh (session 32's plan; e72's DeepSeek-V3-like backward set
# now runs the nine dgrad configurations too, so it takes longer), then e100.sh and e101.sh; on an H100: e100.sh
# (dgrad on k3's configurations: GPU tests and sanitizers) and e101.sh (timed), then e98.sh and e99.sh. Chain calls
# while the machine is warm.
set -e
bash results/h100-80gb-hbm3/evidence/device-calls-dc5482ff7395/prepare.sh
d=results/h100-80gb-hbm3/evidence/session-33-prepared
cp $d/e100.sh $d/e101.sh $d/e102.sh .devscripts/
