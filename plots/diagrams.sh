#!/usr/bin/env bash
# Redraws the layout and pipeline diagrams into results/figures/ from a build's gg_layouts and
# ggemm (plots/diagrams.py). Usage: plots/diagrams.sh BUILD_DIR [diagrams.py options].
# matplotlib is Debian's python3-matplotlib, which a pyenv python3 on PATH may not see: take
# the first python that imports it, and skip with one line (exit 0) when none does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: plots/diagrams.sh BUILD_DIR [--only NAME,...]" >&2; exit 2; }
build=$1
shift
[ -x "$build/bin/gg_layouts" ] || { echo "diagrams: $build/bin/gg_layouts not built" >&2; exit 2; }
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then
        exec "$py" "$root/plots/diagrams.py" "$build/bin" "$root/results/figures" "$@"
    fi
done
echo "== skip: matplotlib not found: diagrams not redrawn (apt-get install python3-matplotlib)"
