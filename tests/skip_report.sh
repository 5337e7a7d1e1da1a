#!/bin/sh
# usage: skip_report.sh DIR — print "skipped NAME: reason" for each reason skippable.sh left in DIR.
[ -d "$1" ] || exit 0
for f in "$1"/*.txt; do
    [ -e "$f" ] || continue
    echo "skipped $(basename "$f" .txt): $(sed "s/^skip: //" "$f")"
done
