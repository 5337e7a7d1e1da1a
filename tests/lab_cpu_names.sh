#!/bin/sh
# usage: lab_cpu_names.sh LAB_CPU LABS_DIR
# Each CPU exercise names the functions the grader grades in it (lab_cpu --list): in its
# starter's opening paragraph ("Exercise: write ...") and in its row of the labs README's table.
grader=$1 labs=$2
"$grader" --list >/dev/null || exit 1
status=0
"$grader" --list | while IFS=: read -r file funcs; do
    intro=$(sed -n '1,/^ \*$/p' "$labs/cpu/$file")
    row=$(grep "^| \`$file\` |" "$labs/README.md")
    for f in $funcs; do
        echo "$intro" | grep -q "\\b$f\\b" || { echo "labs/cpu/$file: its opening paragraph does not name $f"; exit 1; }
        echo "$row" | grep -q "\`$f\`" || { echo "labs/README.md: the row of $file does not name $f"; exit 1; }
    done
    echo "$file names$funcs"
done || status=1
exit $status
