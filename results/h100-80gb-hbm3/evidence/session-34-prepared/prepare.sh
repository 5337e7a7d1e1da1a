# Setup for the calls after session 34, run from the repository root: session 33's setup (its chain: .deps, .whl and
# .devscripts with e49.sh to e102.sh and the patches), then this folder's e103.sh.
# Every call carries .deps, .whl, .devscripts and first writes the commit: git rev-parse --short=12 HEAD >
# .devscripts/commit. Next, on an H200 (the H100 ran e104.sh, e101.sh and the test command at b8ba652:
# ../device-calls-b8ba652b00cf/): e102.sh (the test command, the held-out shapes), e101.sh (dgrad with the split-tail
# kernels beside the forward), e72.sh, e73.sh. e103.sh stays for a GPU where the full kernel tests are wanted without
# the test command. Chain calls while the machine is warm.
set -e
bash results/h100-80gb-hbm3/evidence/session-33-prepared/prepare.sh
cp results/h100-80gb-hbm3/evidence/session-34-prepared/e103.sh .devscripts/
