#!/bin/sh
# usage: sass_check.sh [--arch SM] CUOBJDUMP LIBRARY [--function PATTERN] MNEMONIC...
# Disassemble a stage's library (with --arch, only its cubin for SM, e.g. sm_103a; with
# --function, only the kernels whose mangled name contains PATTERN); every
# MNEMONIC must appear in that SASS, and every !MNEMONIC must not. A library built for two architectures is checked once per
# architecture: otherwise one cubin could hide the other's missing instructions.
# Tools: tests/sass_tools.sh (skip without them, fail in CI).
arch=
if [ "$1" = --arch ]; then
    arch=$2
    shift 2
fi
cuobjdump=$1 lib=$2
shift 2
function=
if [ "$1" = --function ]; then
    function=$2
    shift 2
fi
. "$(dirname "$0")/sass_tools.sh"
sass_tools "$cuobjdump"
sass=$("$cuobjdump" --dump-sass ${arch:+--gpu-architecture "$arch"} "$lib") ||
    { echo "cuobjdump failed on $lib"; exit 1; }
if [ -n "$arch" ] && ! printf '%s\n' "$sass" | grep -q "arch = $arch\$"; then
    echo "no $arch code in $lib"
    exit 1
fi
if [ -n "$function" ]; then # keep the sections from a matching "Function : NAME" to the next
    sass=$(printf '%s\n' "$sass" | awk -v p="$function" '/Function : /{keep = index($0, p) > 0} keep')
    [ -n "$sass" ] || { echo "no kernel matching $function in $lib"; exit 1; }
fi
status=0
for m in "$@"; do
    absent=${m#!}
    n=$(printf '%s\n' "$sass" | grep -cE "[[:space:]]$absent[[:space:].;]")
    echo "$absent: $n"
    if [ "$absent" != "$m" ]; then
        [ "$n" -eq 0 ] || { echo "$absent found in the SASS of $lib, where it must not be"; status=1; }
    else
        [ "$n" -gt 0 ] || { echo "$m not found in the SASS of $lib"; status=1; }
    fi
done
exit $status
