#!/bin/sh
# usage: tests/sanitize.sh BUILD_DIR [KERNEL...]   (GPU, compute-sanitizer)
#        tests/sanitize.sh --moe BUILD_DIR [E,TOPK,D,F,T...]  (sm_90 GPU: the MoE layer, ggemm moe;
#                                                  the layers named, or the list below)
# Runs under compute-sanitizer's memcheck, racecheck and synccheck:
# - kernels: every registered kernel this GPU can run, labs aside (or the ones named), on one
#   ragged problem: empty experts, a 1-row expert, row counts on both sides of 64 and 128, and an
#   output width (n; dgrad's k) that leaves a partial column tile for every BLOCK_N; k5_wgrad also
#   on a problem whose reductions split (ggemm tiles --pass wgrad: split_tiles > 0;
#   tests/CMakeLists.txt checks it),
#   so its partials, tickets and fix-up run, and on one run on 16 CTAs, so that each CTA draws
#   more items than its item queue holds.
# - --moe: `ggemm moe` on small layers that reach every path of k4_moe's kernels, each unfused
#   and fused through every gather this build has (one line for a gather it has not).
# Prints one "== WHAT TOOL" header per run and the tool's summary, and its report (both accesses,
# file:line) where it finds something; exits 1 if any run reports an error or hazard or fails
# its check, 77 (one line) without compute-sanitizer or a GPU. Racecheck's hazards inside
# cuBLAS's nvjet kernels (the check's reference) are not counted, with one line (see below); nor
# are races printed with no location, where they are all the findings and a rerun without the
# check (--no-check) exits 0 with no finding; nor, under memcheck and synccheck, the tool's own
# errors where it could not track a launch of cuBLAS's kernels (out of its memory on the
# 1000-expert layer's reference), where they are all the errors and a rerun without the check
# is clean.
#        tests/sanitize.sh --racecheck-report FILE  (no GPU: how the racecheck report in FILE, - for
#                                                   stdin, is read; a CPU test feeds it a saved one)
#        tests/sanitize.sh --untracked-report FILE  (no GPU: the same for a memcheck or synccheck
#                                                   report)
# GG_COMPUTE_SANITIZER names the tool where it is not on PATH (CTest passes the toolkit's).

# racecheck_read REPORT: sets findings (the tool's lines but its banner, blanks, its summary and
# the two lines of a race whose both accesses are inside cuBLAS's nvjet kernels), cublas (the
# races whose first access is inside nvjet; a second access elsewhere is a finding) and unplaced
# (the races printed with neither access located, two lines each, among the findings). cuBLAS's
# kernels are the check's reference, not under test: racecheck reports hazards inside one of them
# (nvjet_sm90_tss_*, CUDA 13.0), cuBLAS's to answer. Leaving them out of the tool
# (--kernel-name-exclude) makes the excluded kernel fault under racecheck, so the report is read.
racecheck_read() {
    in_nvjet='access at (0x[0-9a-f]+ in )?nvjet_'
    findings=$(printf '%s\n' "$1" | grep "^=========" | sed 's/^=========//' |
        grep -Ev "^ *\$|^ *COMPUTE-SANITIZER\$|^ *RACECHECK SUMMARY|^ *Error: Race reported between .* $in_nvjet|^ *and .* $in_nvjet" |
        grep -c .)
    cublas=$(printf '%s\n' "$1" | grep -Ec "^========= *Error: Race reported between .* $in_nvjet")
    unplaced=$(printf '%s\n' "$1" | grep -A1 -E "^========= *Error: Race reported between [A-Za-z]+ access at *\$" |
        grep -Ec "^========= *and [A-Za-z]+ access at *(\[[0-9]+ hazards?\])?\$")
}
# untracked_read REPORT: sets errors (the tool's lines but its banner, blanks and summary) and
# untracked (its "Internal Sanitizer Error" lines for a launch of cuBLAS's nvjet kernels it did
# not track: the reference's launch, unchecked; not a finding about the kernels under test).
untracked_read() {
    errors=$(printf '%s\n' "$1" | grep "^=========" | sed 's/^=========//' |
        grep -Ev "^ *\$|^ *COMPUTE-SANITIZER\$|^ *(ERROR|LEAK) SUMMARY" | grep -c .)
    untracked=$(printf '%s\n' "$1" | grep -Ec "^========= *Internal Sanitizer Error: .* while launching nvjet_")
}
if [ "$1" = --untracked-report ]; then
    report=$(cat -- "${2:?usage: tests/sanitize.sh --untracked-report FILE}") || exit 2
    untracked_read "$report"
    echo "errors $errors, untracked cuBLAS launches $untracked"
    exit 0
fi
if [ "$1" = --racecheck-report ]; then
    report=$(cat -- "${2:?usage: tests/sanitize.sh --racecheck-report FILE}") || exit 2
    racecheck_read "$report"
    echo "findings $findings, cuBLAS races $cublas, unplaced races $unplaced"
    exit 0
fi
moe=0
if [ "$1" = --moe ]; then
    moe=1
    shift
fi
bin=$1/bin/ggemm
shift
cs=${GG_COMPUTE_SANITIZER:-compute-sanitizer}
command -v "$cs" >/dev/null || { echo "skip: compute-sanitizer not found"; exit 77; }
status=0

# under ARGS...: ggemm ARGS once under $tool (exiting $exit_code on an error), its output and status.
under() {
    "$cs" --tool $tool --error-exitcode $exit_code --print-limit 0 "$bin" "$@" --reps 1 --warmup 0 2>&1
}

# rerun ARGS...: the same run without the check (--no-check: neither cuBLAS nor the harness's
# reference kernels are launched, the kernels under test are): its output in again, status again_rc.
rerun() {
    again=$(under "$@" --no-check)
    again_rc=$?
}

# rerun_read: the rerun's report is the one read from here on (one line, its summary, ggemm's lines).
rerun_read() {
    echo "(rerun without the check, --no-check: its summary and report follow)"
    printf '%s\n' "$again" | grep -E "SUMMARY|ggemm:"
    out=$again
}

# sanitize HEADER ARGS...: ggemm ARGS under each tool; its check line, ggemm's lines, the summary.
sanitize() {
    header=$1
    shift
    for tool in memcheck racecheck synccheck; do
        echo "== $header $tool"
        # racecheck's own exit code is left at 0 (ggemm's status comes through) and its report is
        # read below; the other tools exit 9 on any error.
        # (--print-limit 0: no report is cut short, so none of ours hides behind cuBLAS's.)
        exit_code=9 findings=0
        [ $tool = racecheck ] && exit_code=0
        out=$(under "$@")
        rc=$?
        printf '%s\n' "$out" | grep -E "check|SUMMARY|ggemm:" | grep -v "^ggemm: [a-z0-9_]*, tokens"
        # racecheck: a finding (a race of ours, a warning, an API or internal error) fails the run.
        # A race printed with neither access located names no kernel; where such races are all the
        # findings, the run is repeated without the check. If that run exits 0 with no finding,
        # they are not counted, with one line; if not, its report is the one read.
        if [ $tool = racecheck ]; then
            racecheck_read "$out"
            if [ "$findings" -gt 0 ] && [ "$findings" -eq $((2 * unplaced)) ]; then
                rerun "$@"
                unplaced_first=$unplaced cublas_first=$cublas
                racecheck_read "$again"
                if [ $again_rc = 0 ] && [ "$findings" -eq 0 ]; then
                    echo "($unplaced_first race(s) printed with no location; without the check (--no-check) racecheck finds none: not counted)"
                    [ "$cublas_first" -gt 0 ] &&
                        echo "(the other $cublas_first race(s) are inside cuBLAS's nvjet kernels, the check's reference: not counted)"
                else
                    rerun_read
                    [ $again_rc != 0 ] && rc=$again_rc
                fi
            fi
            if [ "$findings" -gt 0 ]; then
                [ $rc = 0 ] && rc=9
            elif [ "$cublas" -gt 0 ] && [ $rc = 0 ]; then
                echo "(every hazard is inside cuBLAS's nvjet kernels, the check's reference: not counted)"
            fi
        fi
        # memcheck, synccheck: where every error is the tool's failure to track a launch of cuBLAS's
        # kernels (the check's reference), the run is repeated without the check, as above; not
        # where the check failed (the tool's exit code hides ggemm's, and the rerun has no check).
        if [ $tool != racecheck ] && [ $rc = 9 ] && ! printf '%s\n' "$out" | grep -q "check failed"; then
            untracked_read "$out"
            if [ "$untracked" -gt 0 ] && [ "$errors" -eq "$untracked" ]; then
                rerun "$@"
                rc=$again_rc
                if [ $rc = 0 ]; then
                    echo "($untracked launch(es) of cuBLAS's nvjet kernels, the check's reference, not tracked by the tool; without the check (--no-check) it finds none: not counted)"
                else
                    rerun_read
                fi
            fi
        fi
        # A report: the tool's own lines (hazard kind, both accesses with file:line), the first 80.
        if [ $rc = 9 ] || [ "$findings" -gt 0 ]; then
            printf '%s\n' "$out" | grep "^=========" | grep -v SUMMARY | head -n 80
        fi
        case $rc in
        0) ;;
        2) if [ $moe = 0 ]; then echo "(refused by can_implement)"; else status=1; fi ;; # every layer is valid
        *) status=1 ;;
        esac
    done
}

if [ $moe = 0 ]; then
    gpu=$("$bin" list | head -n 1)
    case $gpu in "no GPU"*) echo "skip: $gpu"; exit 77 ;; esac
    # not the peers (no block_m) nor the labs (their starters fail the check until solved)
    kernels=${*:-$("$bin" list --format csv | awk -F, 'NR > 1 && $4 != "" && $1 !~ /^lab_/ && $17 == "ok" {print $1}')}
    for k in $kernels; do
        # The output's width is n, dgrad's k: 392 leaves a partial column tile at every BLOCK_N.
        case $k in k5_dgrad*) width="--k 392 --n 256" ;; *) width="--k 256 --n 392" ;; esac
        sanitize "$k" run --kernel "$k" --m-list 0,1,130,0,64,257,3,200,127,65 $width
        # A split last wave: on 13 CTAs, 2 pieces per tail tile (tests/CMakeLists.txt checks the list).
        case $k in k5_dgrad_tail*)
            sanitize "$k tail split" run --kernel "$k" --m-list 300,0,1,129,64,1000 --k 392 --n 1032 --sms 13 ;;
        esac
        # 3000, 1400, 1025 and 2048 rows split at any grid (chunk >= 16 blocks of 64 rows): 3, 2,
        # 2 (the last split 1 row) and 2 items per output tile.
        # Then 64 experts of 64 rows on 16 CTAs: tens of items per CTA, so the item queue's eight
        # slots are reused (tests/CMakeLists.txt checks both lists).
        case $k in k5_wgrad*)
            sanitize "$k split" run --kernel "$k" --m-list 3000,1400,600,200,64,3,0,1,1025,2048 --k 256 --n 384
            sanitize "$k queue wrap" run --kernel "$k" --tokens 4096 --experts 64 --k 512 --n 768 --skew 0 --sms 16 ;;
        esac
    done
    exit $status
fi

# --moe. The gathers ggemm knows are the ones its refusal of an unknown name lists; a gather
# not built is refused with one line (exit 2) before any GPU is looked for; T = 0 without a
# (Hopper) GPU is one line and 77.
gathers=$("$bin" moe --gather '?' 2>&1 | sed -n 's/.*is not one of //p' | tr -d ,)
[ -n "$gathers" ] || { echo "sanitize.sh: ggemm moe --gather lists no gathers"; exit 1; }
built=
for g in $gathers; do
    out=$("$bin" moe --experts 8 --topk 2 --d 64 --f 128 --tokens 0 --fused --gather "$g" --reps 1 --warmup 0 2>&1)
    case $? in
    0) built="$built $g" ;;
    2) echo "skip: $out" ;;
    77) echo "skip: $out"; exit 77 ;;
    *) echo "$out"; exit 1 ;;
    esac
done
# experts topk d F T, and what each reaches:
#   8 2 256 128 700      88 routing chunks (count_scan runs of 3, the last runs empty), a router split in 2
#   12 3 7168 128 333    the router split-K in 38, E % 8 != 0 (Wr's padded columns)
#   5 2 64 192 300       F / 64 odd: GEMM1's one-pair path
#   1000 40 64 192 100   1000 experts, top-40: the two-level schedule, many empty experts
#   300 8 128 128 200    the two-level schedule just above 256 experts
layers="8,2,256,128,700 12,3,7168,128,333 5,2,64,192,300 1000,40,64,192,100 300,8,128,128,200"
[ $# -gt 0 ] && layers="$*"  # a rerun of some layers (a call's time limit cut the list)
for layer in $layers; do
    IFS=, read -r e topk d f t <<EOF
$layer
EOF
    sizes="--experts $e --topk $topk --d $d --f $f --tokens $t"
    what="moe E=$e top$topk d=$d F=$f T=$t"
    sanitize "$what unfused" moe $sizes --unfused
    for g in $built; do
        sanitize "$what fused $g" moe $sizes --fused --gather "$g"
    done
done
exit $status
