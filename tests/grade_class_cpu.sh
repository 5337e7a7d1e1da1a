#!/bin/sh
# usage: grade_class_cpu.sh SOURCE_DIR WORK_DIR
# labs/grade_class.sh --cpu on a made-up class, no GPU needed: alice solved swizzle (with the
# repository's function) and handed in eta as shipped, bob's swizzle does not compile and his desc
# is the starter, carol handed in a GPU lab only. Exit 0 with the per-student table, each CPU
# exercise graded or reported missing / not building, the GPU lab skipped in one line.
src=$1 work=$2
subs=$work/submissions
rm -rf "$subs" && mkdir -p "$subs/alice" "$subs/bob/cpu" || exit 1
printf '#include "gg_swizzle.h"\n#include "lab_cpu.h"\nuint32_t lab_swizzle128(uint32_t row, uint32_t chunk) { return gg_swizzle128(row, chunk); }\n' \
    >"$subs/alice/swizzle.c"
git -C "$src/labs/cpu" show HEAD:./eta.c >"$subs/alice/eta.c" 2>/dev/null || cp "$src/labs/cpu/eta.c" "$subs/alice/eta.c"
printf '#include "lab_cpu.h"\nuint32_t lab_swizzle128(uint32_t row, uint32_t chunk) { return row +; }\n' >"$subs/bob/cpu/swizzle.c"
git -C "$src/labs/cpu" show HEAD:./desc.c >"$subs/bob/cpu/desc.c" 2>/dev/null || cp "$src/labs/cpu/desc.c" "$subs/bob/cpu/desc.c"
cp "$src/labs/lab_k0_tiles/lab_k0_tiles.cu" "$subs/carol.cu"
sh "$src/labs/grade_class.sh" --cpu "$subs" "$work/class.csv" "$work/build" >"$work/stdout" 2>"$work/stderr"
rc=$?
cat "$work/stdout" "$work/stderr" "$work/class.csv"
fail() { echo "grade_class_cpu.sh: $1"; exit 1; }
[ $rc -eq 0 ] || fail "exit $rc, expected 0"
grep -Eq '^alice +pass +missing +missing +FAIL +missing +missing *$' "$work/stdout" || fail "alice's line"
grep -Eq '^bob +no-build +missing +FAIL +missing +missing +missing *$' "$work/stdout" || fail "bob's line"
grep -q '^alice,lab_swizzle128,cpu,exercise,swizzle,pass,' "$work/class.csv" || fail "alice's swizzle row"
grep -q '^alice,lab_m_tiles lab_tile_count lab_eta lab_adaptive_m_tiles,cpu,exercise,eta,FAIL,"' "$work/class.csv" || fail "alice's eta row"
grep -q '^bob,lab_swizzle128,cpu,exercise,swizzle,FAIL,does not build: ' "$work/class.csv" || fail "bob's swizzle row"
grep -q '^bob,lab_wgmma_desc lab_sm100_smem_desc,cpu,exercise,desc,FAIL,"lab_wgmma_desc(' "$work/class.csv" || fail "bob's desc row"
grep -q '^grade_class.sh: 1 GPU lab file(s) skipped' "$work/stderr" || fail "the GPU lab's skip line"
grep -q '^carol,' "$work/class.csv" && fail "carol's GPU lab was graded under --cpu"
exit 0
