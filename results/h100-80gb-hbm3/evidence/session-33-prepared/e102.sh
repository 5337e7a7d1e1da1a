# Session 33: the README's test command, then the held-out shapes, as e60.sh (which e71.sh runs on an H200), with
# the test command's limit raised: gpu_edge_shapes alone took most of e60's 200 s on an H100 in session 32
# (ctest-dc5482ff7395.log: 27 kernels), and the registry now has 36 (the nine dgrad configurations). On an H200 run
# this in place of e71.sh. Predictions: every test passes (fuzz_cli skipped without clang); the held-out shapes as
# e59.sh's header says.
grep -q '^holdout_' harness/cases.csv || { echo "the tree has no holdout set: stop"; exit 1; }
rm -f build/.commit; source .devscripts/pro.sh
[ $(left) -gt 360 ] && { timeout 340 ctest --preset test -j 4 > $o/ctest.log 2>&1; say "ctest rc=$?"; tail -4 $o/ctest.log; pack; }
source .devscripts/holdout.sh.body
