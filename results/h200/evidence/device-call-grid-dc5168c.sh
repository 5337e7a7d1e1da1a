#!/bin/bash
# device call A (issue 26, at commit $1): the validation grid's baseline (every k3_wgmma configuration
# with ablations, the default, torch) and calibration-style uniform shapes, for fitting the cost model.
set -u
NEW=$1; t0=$SECONDS
export GG_COMMIT=$NEW
cmake --preset release -DGG_ABLATIONS=ON --log-level=NOTICE > /tmp/cfg.log 2>&1 && cmake --build --preset release -j16 --target ggemm > /tmp/build.log 2>&1 || { echo BUILD FAILED; tail -30 /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
GG_CASES=.devscripts/cal.csv build/bin/ggemm sweep --out $OUT/cal.csv > $OUT/cal.log 2>&1; echo "cal rc $? at $((SECONDS - t0)) s"
build/bin/ggemm sweep --set 'grid*' --out $OUT/grid.csv > $OUT/grid.log 2>&1; echo "grid rc $? at $((SECONDS - t0)) s"
cases=$(mktemp); build/bin/ggemm cases --set 'grid*' --kernels torch_grouped_mm --format csv > $cases
python3 harness/peers/torch_grouped_mm.py --csv $OUT/grid.csv --cases $cases >> $OUT/grid.log 2>&1; echo "torch rc $? at $((SECONDS - t0)) s"
grep -c ',pass,' $OUT/grid.csv; grep -c ',fail' $OUT/grid.csv; tail -3 $OUT/grid.log
echo "total $((SECONDS - t0)) s"
