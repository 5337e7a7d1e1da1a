# Setup for the calls after session 34, run from the repository root: session 33's setup (its chain: .deps, .whl and
# .devscripts with e49.sh to e102.sh and the patches), then this folder's e103.sh.
# Every call carries .deps, .whl, .devscripts and first writes the commit: git rev-parse --short=12 HEAD >
# .devscripts/commit. Next, on any sm_90 GPU: e103.sh (GPU tests of every kernel, the split-tail dgrad's among them,
# and sanitizers of the new dgrad kernels; in place of e100.sh), then e101.sh (the dgrad sweep times k5_dgrad*, the
# split-tail kernels included). On an H200 before them: e102.sh, e72.sh, e73.sh. Chain calls while the machine is warm.
set -e
bash results/h100-80gb-hbm3/evidence/session-33-prepared/prepare.sh
cp results/h100-80gb-hbm3/evidence/session-34-prepared/e103.sh .devscripts/
