#!/bin/sh
# usage: sass_check.sh [--arch SM] CUOBJDUMP LIBRARY MNEMONIC...
# Disassemble a stage's library (with --arch, only its cubin for SM, e.g. sm_103a); every
# MNEMONIC must appear in that SASS. A library built for two architectures is checked once per
# architecture: otherwise one cubin could hide the other's missing instructions.
# Exit 77 (CTest: skipped) when no cuobjdump is installed (pip install nvidia-cuda-cuobjdump).
arch=
if [ "$1" = --arch ]; then
    arch=$2
    shift 2
fi
cuobjdump=$1 lib=$2
shift 2
if [ ! -x "$cuobjdump" ]; then
    echo "skip: no cuobjdump (pip install nvidia-cuda-cuobjdump)"
    exit 77
fi
sass=$("$cuobjdump" --dump-sass ${arch:+--gpu-architecture "$arch"} "$lib") ||
    { echo "cuobjdump failed on $lib"; exit 1; }
if [ -n "$arch" ] && ! printf '%s\n' "$sass" | grep -q "arch = $arch\$"; then
    echo "no $arch code in $lib"
    exit 1
fi
status=0
for m in "$@"; do
    n=$(printf '%s\n' "$sass" | grep -cE "[[:space:]]$m[[:space:].;]")
    echo "$m: $n"
    [ "$n" -gt 0 ] || { echo "$m not found in the ${arch:+$arch }SASS of $lib"; status=1; }
done
exit $status
