# Sourced by the SASS tests: sass_tools CUOBJDUMP makes cuobjdump and nvdisasm usable or ends
# the test. cuobjdump runs nvdisasm, which it looks for on PATH: the directory holding cuobjdump
# goes first. Without the tools: skip (exit 77) on a developer's machine, fail in CI
# (CI=true), where the README's install line puts them in .venv.
sass_tools_missing() {
    if [ "${CI:-}" = "true" ]; then
        echo "FAIL: $1 (CI must run the SASS tests: see the README's install line)"
        exit 1
    fi
    echo "skip: $1 (the README's install line puts nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm in .venv)"
    exit 77
}
sass_tools() {
    [ -x "$1" ] || sass_tools_missing "no cuobjdump found"
    PATH=$(dirname "$1"):$PATH
    command -v nvdisasm >/dev/null 2>&1 || sass_tools_missing "cuobjdump found but no nvdisasm next to it or on PATH"
}
