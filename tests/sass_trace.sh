#!/bin/sh
# usage: sass_trace.sh CUOBJDUMP LIBRARY TRACED
# The tracer's compile-time switch (common/gg_trace.cuh) must leave no trace code behind: in the
# library's SASS, exactly TRACED kernels are traced twins (the kernel template's last argument,
# bool TRACE, is true: `Lb1E` closing the template arguments of the mangled name), each of them
# reads the global timer (SR_GLOBALTIMERLO/HI, what %globaltimer compiles to), and no other
# kernel does. Tools: tests/sass_tools.sh (skip without them, fail in CI).
cuobjdump=$1 lib=$2 expected=$3
. "$(dirname "$0")/sass_tools.sh"
sass_tools "$cuobjdump"
sass=$("$cuobjdump" --dump-sass "$lib") || { echo "cuobjdump failed on $lib"; exit 1; }
# One line per kernel and cubin: "traced|untraced timer-reads symbol".
report=$(printf '%s\n' "$sass" | awk '
    function flush() { if (name != "") print (name ~ /Lb1EEEv/ ? "traced" : "untraced"), reads, name }
    /Function : / { flush(); name = $NF; reads = 0; next }
    /SR_GLOBALTIMER/ { reads++ }
    END { flush() }')
printf '%s\n' "$report"
traced=$(printf '%s\n' "$report" | grep -c '^traced ')
status=0
[ "$traced" -eq "$expected" ] || { echo "$traced traced kernels in $lib, expected $expected"; status=1; }
if printf '%s\n' "$report" | grep -q '^traced 0 '; then
    echo "a traced kernel of $lib reads no global timer"
    status=1
fi
if printf '%s\n' "$report" | grep -qv '^traced \|^untraced 0 '; then
    echo "an untraced kernel of $lib reads the global timer: trace code left in it"
    status=1
fi
exit $status
