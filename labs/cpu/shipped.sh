#!/bin/sh
# The CPU starters as the repository ships them, for lab_cpu_shipped (labs/CMakeLists.txt), so
# that "every exercise fails as shipped" is checked on the shipped file, never on a student's.
#   shipped.sh write CPU_DIR OUT_DIR FILE...   OUT_DIR/FILE = FILE as committed at HEAD (git); a
#       file is rewritten only when its text changes. Outside a git checkout the working files
#       are copied and OUT_DIR/FROM says so (a student's edits cannot be told from the starter).
#   shipped.sh grade OUT_DIR GRADER EXERCISE   the test: GRADER must fail EXERCISE with the
#       grader's own message, no crash (exit 1); 77 outside a git checkout.
set -u
mode=$1
shift
case $mode in
write)
    cpu=$1 out=$2
    shift 2
    mkdir -p "$out"
    from=git
    for f; do
        git -C "$cpu" show "HEAD:./$f" >"$out/$f.new" 2>/dev/null || { cp "$cpu/$f" "$out/$f.new" && from=working; } || exit 1
        if cmp -s "$out/$f.new" "$out/$f"; then rm -f "$out/$f.new"; else mv "$out/$f.new" "$out/$f"; fi
    done
    [ "$(cat "$out/FROM" 2>/dev/null)" = "$from" ] || echo "$from" >"$out/FROM"
    ;;
grade)
    out=$1 grader=$2 ex=$3
    if [ "$(cat "$out/FROM" 2>/dev/null)" != git ]; then
        echo "not a git checkout: the starters as shipped cannot be told from edited ones"
        exit 77
    fi
    exec sh "$(dirname "$0")/../../tests/expect.sh" 1 "Failures: [1-9][0-9]*, Errors: 0" "$grader" "$ex"
    ;;
*)
    echo "usage: shipped.sh write CPU_DIR OUT_DIR FILE... | grade OUT_DIR GRADER EXERCISE" >&2
    exit 2
    ;;
esac
