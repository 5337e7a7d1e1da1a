#!/bin/sh
# usage: labs/grade_class.sh [--cpu] SUBMISSIONS_DIR OUT.csv [BUILD_DIR]
# Grades a class. In SUBMISSIONS_DIR every <student>.cu or <student>/<file>.cu is one GPU lab file
# (a filled-in starter, or any kernel with its GG_LAB line), and every <student>/ folder holding
# any of the CPU exercises (swizzle.c ldmatrix.c desc.c eta.c wgrad.c route.c, at any depth) is that student's
# CPU work. BUILD_DIR (default build-class) is configured once with two slots of its own.
# CPU exercises first, no GPU needed: a student's files go into the CPU slot (an exercise not
# handed in keeps the repository's file, and is reported missing, not graded), lab_cpu is rebuilt
# and grades each one (a file that does not build is graded alone, the others as handed in).
# GPU labs then: each is built in turn as the only lab of the lab slot (the first build compiles
# the stages once, then only the submission and the link) and graded with `ggemm grade --format
# csv`. OUT.csv gets every row with the submission's name in front (CPU rows: kernel = the
# functions the exercise asks for, part = exercise, shape = its name), and one row for a
# submission that does not build; stdout gets one line per student with each CPU exercise's
# outcome. --cpu: the CPU exercises only (no stages built, no GPU needed); the GPU lab files are
# then reported skipped in one line. GG_GRADE_ARGS passes options to ggemm grade (e.g. "--reps
# 10"). Exit 0 when everything asked for was graded, whatever the grades; 77 when GPU labs are to
# be graded and there is no GPU (the CPU rows are written first); 2 on bad usage.
set -u
cpu_only=0
[ "${1:-}" = --cpu ] && { cpu_only=1; shift; }
if [ $# -lt 2 ] || [ $# -gt 3 ] || [ ! -d "$1" ]; then
    echo "usage: labs/grade_class.sh [--cpu] SUBMISSIONS_DIR OUT.csv [BUILD_DIR]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
subs=$(cd "$1" && pwd) out=$2 build=${3:-$root/build-class}
slot=$build/class-slot cpu_slot=$build/class-cpu-slot logs=$build/class-logs
exercises="swizzle ldmatrix desc eta wgrad route"
mkdir -p "$slot" "$cpu_slot" "$logs" || exit 2
: >"$out" || { echo "grade_class.sh: cannot write $out" >&2; exit 2; }
reset_cpu_slot() { for e_ in $exercises; do cp "$root/labs/cpu/$e_.c" "$cpu_slot/$e_.c"; done; }
reset_cpu_slot
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGG_LABS_DIR="$slot" -DGG_LAB_CPU_DIR="$cpu_slot" \
    >"$logs/configure.log" 2>&1 || {
    echo "grade_class.sh: configuring $build failed (see $logs/configure.log)" >&2
    exit 2
}
echo "submission,kernel,stage,part,shape,check,detail,useful_tflops,roofline_pct,stage_best,stage_best_tflops,vs_stage,previous_best,previous_best_tflops,vs_previous" >"$out"
name_of() { echo "$1" | tr '/, ' '___'; }
csv_text() { [ -z "$1" ] || printf '"%s"' "$(echo "$1" | sed 's/"/""/g')"; }

# ---- CPU exercises ----
students=$logs/cpu-students.txt
for ex in $exercises; do find "$subs" -mindepth 2 -name "$ex.c"; done | sed "s|^$subs/||; s|/.*||" | sort -u >"$students"
if [ -s "$students" ] && ! grep -q '^CHECK_FOUND:INTERNAL=1' "$build/CMakeCache.txt"; then
    echo "grade_class.sh: the CPU exercises need Check (Debian/Ubuntu: apt-get install pkg-config check)" >&2
    exit 2
fi
build_cpu() { cmake --build "$build" --target lab_cpu -j >"$1" 2>&1 </dev/null; }
if [ -s "$students" ]; then # the grader itself, on the repository's files; and what each exercise asks for
    build_cpu "$logs/lab_cpu.build.log" || { echo "grade_class.sh: building lab_cpu failed (see $logs/lab_cpu.build.log)" >&2; exit 2; }
    "$build/bin/lab_cpu" --list >"$logs/cpu-functions.txt"
fi
functions() { sed -n "s/^$1\.c: //p" "$logs/cpu-functions.txt"; }
# One exercise with the grader built: a row and the word for the table.
grade_cpu() { # WHO EX
    g=$logs/$1.$2.txt
    timeout 300 "$build/bin/lab_cpu" "$2" >"$g" 2>&1 </dev/null
    rc=$?
    case $rc in
    0) verdict=pass detail= ;;
    1) verdict=FAIL detail=$(grep -m 1 -E '^[^:]*:[0-9]+:[FE]:' "$g" | cut -d: -f7- | sed 's/^ //') ;;
    *) verdict=FAIL detail="lab_cpu exit $rc: $(tail -n 1 "$g")" ;;
    esac
    echo "$1,$(functions "$2"),cpu,exercise,$2,$verdict,$(csv_text "$detail"),,,,,,,," >>"$out"
    word=$verdict
}
rm -f "$logs/cpu-table.txt.new"
while read -r who; do
    reset_cpu_slot
    handed=
    for ex in $exercises; do
        f=$(find "$subs/$who" -name "$ex.c" | sort | head -n 1)
        [ -n "$f" ] && cp "$f" "$cpu_slot/$ex.c" && handed="$handed $ex"
    done
    id=$(name_of "$who")
    echo "== $id (CPU:$handed)" >&2
    whole=1
    build_cpu "$logs/$id.cpu-build.log" || whole=0
    line=$id
    for ex in $exercises; do
        case " $handed " in *" $ex "*) ;; *)
            echo "$id,$(functions "$ex"),cpu,exercise,$ex,missing,not handed in,,,,,,,," >>"$out"
            line="$line missing"
            continue ;;
        esac
        if [ $whole -eq 0 ]; then # the student's files together do not build: this one alone
            reset_cpu_slot
            cp "$(find "$subs/$who" -name "$ex.c" | sort | head -n 1)" "$cpu_slot/$ex.c"
            if ! build_cpu "$logs/$id.$ex.build.log"; then
                echo "$id,$(functions "$ex"),cpu,exercise,$ex,FAIL,does not build: $logs/$id.$ex.build.log,,,,,,,," >>"$out"
                line="$line no-build"
                continue
            fi
        fi
        grade_cpu "$id" "$ex"
        line="$line $word"
    done
    echo "$line" >>"$logs/cpu-table.txt.new"
done <"$students"
reset_cpu_slot
if [ -s "$students" ]; then
    { echo "student $exercises"; cat "$logs/cpu-table.txt.new"; } | awk '{ for (i = 1; i <= NF; ++i) printf "%-*s", i == 1 ? 24 : 10, $i; print "" }'
    rm -f "$logs/cpu-table.txt.new"
fi

# ---- GPU labs ----
list=$logs/submissions.txt
find "$subs" -mindepth 1 -maxdepth 2 -name '*.cu' | sort >"$list"
gpu_labs=$(wc -l <"$list")
if [ "$gpu_labs" -gt 0 ] && [ $cpu_only -eq 1 ]; then
    echo "grade_class.sh: $gpu_labs GPU lab file(s) skipped (--cpu; grade them on a GPU without --cpu)" >&2
    gpu_labs=0
fi
[ "$gpu_labs" -gt 0 ] || : >"$list"
while read -r file; do
    who=${file#"$subs"/}
    who=$(name_of "${who%.cu}")
    rm -rf "${slot:?}"/*
    mkdir -p "$slot/submission"
    cp "$file" "$slot/submission/submission.cu"
    name=$(sed -n 's/^GG_LAB(\([A-Za-z_][A-Za-z0-9_]*\),.*/\1/p' "$file" | head -1)
    echo "== $who ($name)" >&2
    if ! cmake --build "$build" --target ggemm -j >"$logs/$who.build.log" 2>&1 </dev/null; then
        echo "$who,$name,,build,,FAIL,does not build: $logs/$who.build.log,,,,,,,," >>"$out"
        continue
    fi
    # shellcheck disable=SC2086 # GG_GRADE_ARGS is a list of options
    timeout 1200 "$build/bin/ggemm" grade --kernel "$name" --format csv ${GG_GRADE_ARGS:-} >"$logs/$who.csv" 2>"$logs/$who.err" </dev/null
    rc=$?
    if [ $rc -eq 77 ]; then
        echo "grade_class.sh: GPU labs not graded: $(tail -n 1 "$logs/$who.err") (--cpu grades the CPU exercises alone)" >&2
        exit 77
    fi
    tail -n +2 "$logs/$who.csv" | sed "s/^/$who,/" >>"$out"
    [ $rc -eq 0 ] || [ $rc -eq 1 ] && continue
    echo "$who,$name,,grade,,FAIL,ggemm grade exit $rc: $(tail -n 1 "$logs/$who.err" | tr ',' ';'),,,,,,,," >>"$out"
done <"$list"
echo "grade_class.sh: $(($(wc -l <"$out") - 1)) rows in $out" >&2
