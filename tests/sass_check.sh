#!/bin/sh
# usage: sass_check.sh CUOBJDUMP LIBRARY MNEMONIC...
# Disassemble a stage's library; every MNEMONIC must appear in its SASS.
# Exit 77 (CTest: skipped) when no cuobjdump is installed (pip install nvidia-cuda-cuobjdump).
cuobjdump=$1 lib=$2
shift 2
if [ ! -x "$cuobjdump" ]; then
    echo "skip: no cuobjdump (pip install nvidia-cuda-cuobjdump)"
    exit 77
fi
sass=$("$cuobjdump" --dump-sass "$lib") || { echo "cuobjdump failed on $lib"; exit 1; }
status=0
for m in "$@"; do
    n=$(printf '%s\n' "$sass" | grep -cE "[[:space:]]$m[[:space:].;]")
    echo "$m: $n"
    [ "$n" -gt 0 ] || { echo "$m not found in the SASS of $lib"; status=1; }
done
exit $status
