#!/bin/sh
# usage: sass_check.sh [--arch SM] CUOBJDUMP LIBRARY MNEMONIC...
# Disassemble a stage's library (with --arch, only its cubin for SM, e.g. sm_103a); every
# MNEMONIC must appear in that SASS. A library built for two architectures is checked once per
# architecture: otherwise one cubin could hide the other's missing instructions.
# cuobjdump runs nvdisasm, which it looks for on PATH: the directory holding cuobjdump goes first.
# Without the tools: skip (exit 77) on a developer's machine, fail in CI (CI=true), where the
# install line of the README puts them in .venv.
arch=
if [ "$1" = --arch ]; then
    arch=$2
    shift 2
fi
cuobjdump=$1 lib=$2
shift 2
missing() {
    if [ "${CI:-}" = "true" ]; then
        echo "FAIL: $1 (CI must run the SASS tests: see the README's install line)"
        exit 1
    fi
    echo "skip: $1 (the README's install line puts nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm in .venv)"
    exit 77
}
[ -x "$cuobjdump" ] || missing "no cuobjdump found"
PATH=$(dirname "$cuobjdump"):$PATH
command -v nvdisasm >/dev/null 2>&1 || missing "cuobjdump found but no nvdisasm next to it or on PATH"
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
    [ "$n" -gt 0 ] || { echo "$m not found in the SASS of $lib"; status=1; }
done
exit $status
