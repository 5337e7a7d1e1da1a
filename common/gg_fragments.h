/* Who addresses and who holds which element in the warp-level matrix instructions of the
 * kernels: the ldmatrix / stmatrix .x4 address contract, what ldmatrix hands each lane, and the
 * f32 accumulator layouts of mma.sync m16n8k16 and wgmma m64nNk16 (PTX ISA: "Warp-level matrix
 * load instruction: ldmatrix", "Matrix Fragments for mma.m16n8k16", "Matrix Fragments for
 * wgmma.mma_async.m64nNk16").
 *
 * One home for these facts: the k1 and k2 ldmatrix addresses, both epilogues
 * (gg_mma_sync_store.cuh, gg_wgmma_store.cuh), the diagram dumper plots/layouts.c and the CPU
 * test tests/suite_layouts.c all call these functions. Each keeps the operators the kernels
 * used before it moved here (for a signed lane the compiler cannot prove >= 0, / 4 and >> 2
 * compile differently), so the move left the kernels' SASS unchanged. */
#ifndef GG_FRAGMENTS_H
#define GG_FRAGMENTS_H
#include "gg_hd.h"

/* ---- The 8 x 8 atom every layout below is made of ----
 * In an 8 x 8 block, lane L holds row L / 4 and the two adjacent columns 2 (L % 4) + elem,
 * elem = 0, 1: four lanes share a row, and one 32-bit register holds a bf16 pair (ldmatrix) or
 * one f32 (accumulators, where the pair is two registers). */
GG_HD int gg_atom_row(int lane) { return lane / 4; }
GG_HD int gg_atom_col(int lane, int elem) { return (lane % 4) * 2 + elem; }

/* ---- ldmatrix.x4 / stmatrix.x4: who supplies which row address ----
 * Lane L gives the address of row L % 8 of matrix L / 8 (matrices 0..3 go to registers 0..3). */
GG_HD int gg_x4_matrix(int lane) { return lane >> 3; }
GG_HD int gg_x4_matrix_row(int lane) { return lane & 7; }

/* The kernels load a 16 x 16 block of bf16 (16 rows of two 16-byte chunks) with one .x4, the
 * matrices ordered m = rows 8 (m % 2) .. + 7 of chunk m / 2. For A that order is registers
 * a0..a3 of mma m16n8k16; for B, read with .trans from a k x n slice, it is b0, b1 of columns
 * 0-7 and then b0, b1 of columns 8-15. So lane L addresses row row0 + L % 16 of the block and
 * chunk chunk0 + L / 16 (a chunk is 8 bf16, one matrix row). */
GG_HD int gg_ldsm_x4_row(int row0, int lane) { return row0 + (lane & 15); }
GG_HD int gg_ldsm_x4_chunk(int chunk0, int lane) { return chunk0 + (lane >> 4); }

/* ---- What ldmatrix.x4 hands back ----
 * Register m of lane L holds elements elem = 0, 1 of matrix m at the atom position: row
 * gg_atom_row(L), columns gg_atom_col(L, elem) of the matrix as stored; with .trans the matrix
 * is read column-major, so the same register holds column gg_atom_row(L), rows
 * gg_atom_col(L, elem). Returned as (row, column) of the stored 16 x 16 block, in the matrix
 * order above. */
GG_HD int gg_ldsm_x4_elem_row(int lane, int reg, int elem, int trans) {
    return (reg % 2) * 8 + (trans ? gg_atom_col(lane, elem) : gg_atom_row(lane));
}
GG_HD int gg_ldsm_x4_elem_col(int lane, int reg, int elem, int trans) {
    return (reg / 2) * 8 + (trans ? gg_atom_row(lane) : gg_atom_col(lane, elem));
}

/* ---- mma.sync m16n8k16, f32 C/D ----
 * Register i (0..3) of lane L: row gg_atom_row(L) + 8 (i / 2), column gg_atom_col(L, i % 2).
 * Registers 2h and 2h + 1 are adjacent columns of one row: one bf16x2 store. */
GG_HD int gg_mma_c_row(int lane, int reg) { return (reg / 2) * 8 + gg_atom_row(lane); }
GG_HD int gg_mma_c_col(int lane, int reg) { return gg_atom_col(lane, reg % 2); }

/* ---- wgmma m64nNk16, f32 D (N/2 registers per thread) ----
 * Warp w of the warpgroup owns rows 16 w .. 16 w + 15 and holds them as N / 8 m16n8 C
 * fragments side by side: register i of thread t is register i % 4 of the fragment of columns
 * 8 (i / 4) .. + 7, in lane t % 32. */
#define GG_WGMMA_WARP_ROWS 16
GG_HD int gg_wgmma_d_row(int thread, int reg) {
    return (thread / 32) * GG_WGMMA_WARP_ROWS + gg_mma_c_row(thread % 32, reg % 4);
}
GG_HD int gg_wgmma_d_col(int thread, int reg) {
    return (reg / 4) * 8 + gg_mma_c_col(thread % 32, reg % 4);
}

#endif
