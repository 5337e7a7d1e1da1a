#!/bin/sh
# usage: tests/sanitize_rule.sh SANITIZE_SH RERUN_REPORT EXPECTED_EXIT EXPECTED_LINE
#                              [SYNC_REPORT [EDIT [SYNC_RERUN]]] < REPORT
# sanitize.sh's rule for races printed with no location, on the CPU: a stand-in compute-sanitizer
# prints REPORT (stdin) for a racecheck run and RERUN_REPORT for one with --no-check, or REPORT
# again where RERUN_REPORT is "same" (memcheck and synccheck: a clean summary); a stand-in ggemm
# answers `list`. With SYNC_REPORT, synccheck prints it (after the sed EDIT, if given) and exits 9,
# and with --no-check prints a clean summary, or the same report again (exit 9) where SYNC_RERUN is
# "same": the rule for launches of cuBLAS the tool did not track. sanitize.sh runs one kernel and
# must exit EXPECTED_EXIT and print a line holding EXPECTED_LINE. Prints sanitize.sh's output;
# exits 0 where both hold.
sanitize=$1 rerun=$2 expected=$3 line=$4 sync=$5 edit=${6:-b} sync_rerun=$7
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
report=$dir/report
cat > "$report"
[ -s "$report" ] || { echo "sanitize_rule.sh: no report on stdin"; exit 1; }
[ "$rerun" = same ] && rerun=$report
synccheck=
if [ -n "$sync" ]; then
    sed "$edit" "$sync" > "$dir/sync" || exit 1
    again="echo '========= ERROR SUMMARY: 0 errors'; exit 0"
    [ "$sync_rerun" = same ] && again="cat '$dir/sync'; exit 9"
    synccheck="*\"--tool synccheck\"*--no-check*) $again ;;
*\"--tool synccheck\"*) cat '$dir/sync'; exit 9 ;;"
fi
mkdir "$dir/bin"
printf '#!/bin/sh\necho "stand-in GPU"\n' > "$dir/bin/ggemm"
cat > "$dir/cs" <<STANDIN
#!/bin/sh
case "\$*" in
*"--tool racecheck"*--no-check*) cat "$rerun" ;;
*"--tool racecheck"*) cat "$report" ;;
$synccheck
*) echo "========= ERROR SUMMARY: 0 errors" ;;
esac
STANDIN
chmod +x "$dir/bin/ggemm" "$dir/cs"
out=$(GG_COMPUTE_SANITIZER="$dir/cs" sh "$sanitize" "$dir" stand_in_kernel)
status=$?
printf '%s\n' "$out"
echo "sanitize.sh exit $status (expected $expected)"
[ "$status" = "$expected" ] && printf '%s\n' "$out" | grep -qF -- "$line"
