#!/bin/sh
# usage: no_nvcc_on_path.sh SOURCE_DIR WORK_DIR
# Configures SOURCE_DIR as a new shell without the toolkit's bin on PATH would: every PATH entry
# holding an nvcc is dropped. With /usr/local/cuda/bin/nvcc present the configure must use it and
# say so; without it, stop with the one line that names nvcc and PATH.
src=$1 work=$2
path=
old_ifs=$IFS
IFS=:
for d in $PATH; do
    [ -x "$d/nvcc" ] || path=${path:+$path:}$d
done
IFS=$old_ifs
for tool in cmake cc; do
    PATH=$path command -v $tool >/dev/null || { echo "$tool lives beside nvcc on PATH: cannot hide nvcc alone"; exit 77; }
done
rm -rf "$work"
out=$(env -u CUDACXX -u CUDA_PATH PATH="$path" cmake -S "$src" -B "$work" 2>&1)
rc=$?
rm -rf "$work"
echo "$out" | grep -E "nvcc|Error"
if [ -x /usr/local/cuda/bin/nvcc ]; then
    [ $rc -eq 0 ] && echo "$out" | grep -q "nvcc is not on PATH: using /usr/local/cuda/bin/nvcc" && exit 0
    echo "no_nvcc_on_path.sh: expected the configure to use /usr/local/cuda/bin/nvcc (exit $rc)"
    exit 1
fi
[ $rc -ne 0 ] && echo "$out" | grep -q "^ *nvcc not found: put the CUDA toolkit's bin on PATH" && exit 0
echo "no_nvcc_on_path.sh: expected the one-line 'nvcc not found' error (exit $rc)"
exit 1
