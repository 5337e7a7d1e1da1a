/* Exercise: write lab_ldsm_x4_row, lab_ldsm_x4_chunk, lab_mma_c_row and lab_mma_c_col: who
 * addresses what in ldmatrix.x4, and who holds what of an mma.sync accumulator (k1 and k2 are
 * built on both).
 *
 * The kernels load a 16 x 16 bf16 block with one ldmatrix.x4: 16 rows of two 16-byte chunks,
 * the four 8 x 8 matrices ordered "rows 0-7 of chunk 0, rows 8-15 of chunk 0, rows 0-7 of chunk
 * 1, rows 8-15 of chunk 1" (for A that is a0..a3 of mma.m16n8k16). Each of the 32 lanes gives
 * one row address. lab_ldsm_x4_row: the row (of the block starting at row0) lane `lane`
 * addresses; lab_ldsm_x4_chunk: its chunk (of the pair starting at chunk0).
 *
 * mma.sync.m16n8k16 with f32 C: each lane holds 4 registers of the 16 x 8 accumulator.
 * lab_mma_c_row / lab_mma_c_col: the row and column of register `reg` (0..3) of lane `lane`.
 * (PTX ISA: "ldmatrix", "Matrix Fragments for mma.m16n8k16"; the repository's answers are
 * gg_ldsm_x4_row, gg_ldsm_x4_chunk, gg_mma_c_row, gg_mma_c_col in common/gg_fragments.h.)
 * Grade (rebuilds first): cmake --build build --target lab_cpu && build/bin/lab_cpu ldmatrix */
#include "lab_cpu.h"

int lab_ldsm_x4_row(int row0, int lane) {
    (void)lane;
    return row0; /* your code here */
}

int lab_ldsm_x4_chunk(int chunk0, int lane) {
    (void)lane;
    return chunk0; /* your code here */
}

int lab_mma_c_row(int lane, int reg) {
    (void)lane;
    (void)reg;
    return 0; /* your code here */
}

int lab_mma_c_col(int lane, int reg) {
    (void)lane;
    (void)reg;
    return 0; /* your code here */
}
