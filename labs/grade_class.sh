#!/bin/sh
# usage: labs/grade_class.sh SUBMISSIONS_DIR OUT.csv [BUILD_DIR]
# Grades a class: every SUBMISSIONS_DIR/<student>.cu or <student>/<file>.cu is one lab file
# (a filled-in starter, or any kernel with its GG_LAB line). Each is built in turn as the only
# lab of BUILD_DIR (default build-class; the first build compiles the stages once, then only the
# submission and the link) and graded with `ggemm grade --format csv`; OUT.csv gets every row
# with the submission's name in front, and one row for a submission that does not build.
# GG_GRADE_ARGS passes options on (e.g. "--reps 10"). Exit 0 when every submission was graded,
# whatever the grades; 77 without a GPU; 2 on bad usage.
set -u
if [ $# -lt 2 ] || [ ! -d "$1" ]; then
    echo "usage: labs/grade_class.sh SUBMISSIONS_DIR OUT.csv [BUILD_DIR]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
subs=$(cd "$1" && pwd) out=$2 build=${3:-$root/build-class}
slot=$build/class-slot logs=$build/class-logs
mkdir -p "$slot" "$logs"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGG_LABS_DIR="$slot" >"$logs/configure.log" 2>&1 || {
    echo "grade_class.sh: configuring $build failed (see $logs/configure.log)" >&2
    exit 2
}
echo "submission,kernel,stage,part,shape,check,detail,useful_tflops,roofline_pct,stage_best,stage_best_tflops,vs_stage,previous_best,previous_best_tflops,vs_previous" >"$out"
list=$logs/submissions.txt
find "$subs" -mindepth 1 -maxdepth 2 -name '*.cu' | sort >"$list"
while read -r file; do
    who=${file#"$subs"/}
    who=${who%.cu}
    who=$(echo "$who" | tr '/,' '__')
    rm -rf "${slot:?}"/*
    mkdir -p "$slot/submission"
    cp "$file" "$slot/submission/submission.cu"
    name=$(sed -n 's/^GG_LAB(\([A-Za-z_][A-Za-z0-9_]*\),.*/\1/p' "$file" | head -1)
    echo "== $who ($name)" >&2
    if ! cmake --build "$build" --target ggemm -j >"$logs/$who.build.log" 2>&1; then
        echo "$who,$name,,build,,FAIL,does not build: $logs/$who.build.log,,,,,,,," >>"$out"
        continue
    fi
    # shellcheck disable=SC2086 # GG_GRADE_ARGS is a list of options
    timeout 1200 "$build/bin/ggemm" grade --kernel "$name" --format csv ${GG_GRADE_ARGS:-} >"$logs/$who.csv" 2>"$logs/$who.err"
    rc=$?
    if [ $rc -eq 77 ]; then
        cat "$logs/$who.err" >&2
        exit 77
    fi
    tail -n +2 "$logs/$who.csv" | sed "s/^/$who,/" >>"$out"
    [ $rc -eq 0 ] || [ $rc -eq 1 ] && continue
    echo "$who,$name,,grade,,FAIL,ggemm grade exit $rc: $(tail -n 1 "$logs/$who.err" | tr ',' ';'),,,,,,,," >>"$out"
done <"$list"
echo "grade_class.sh: $(($(wc -l <"$out") - 1)) rows in $out" >&2
