// Hopper wgmma epilogue: one warp's 16 rows of an m64nN f32 accumulator to a bf16 row-major
// C, through a 2 KiB shared-memory staging buffer, with rows and columns masked.
//
// Why staged: the fragment gives each thread pairs of adjacent columns (4-byte stores, 8
// rows per instruction); stmatrix moves it into a 128B-swizzled 16 x 64 block (conflict-free
// both ways, gg_swizzle.h) from which each lane reads and stores whole 16-byte chunks.
// Why not a TMA store: it clips only at the tensor's edge, so rows past an expert's end
// (the next expert's output) would be overwritten. Used by k3_wgmma.
// wgmma_store_warp_rows_tma is the TMA store for outputs whose tiles end at a tensor edge
// (k5_wgrad's dB_e, one expert's k x n of a 3-D map): no read-back, no masks, and the warp
// goes on while the copy engine writes.
// wgmma_store_f32_warp_rows keeps the fp32 values (k4's router logits): no staging, each
// register straight to its (row, column) of the fragment map.
#pragma once
#include <stdint.h>
#include "gg_fragments.h"
#include "gg_swizzle.h"
#include "ptx/ptx_ampere.cuh"  // pack_bf16x2
#include "ptx/ptx_tma.cuh"     // tma_store_3d, bulk groups, fence_proxy_async_smem
#include "ptx/ptx_wgmma.cuh"   // stmatrix_x4

namespace gg {

constexpr int WGMMA_STORE_ROWS = GG_WGMMA_WARP_ROWS;  // a warp's rows of the m64 accumulator
constexpr int WGMMA_STORE_PANEL_N = 64;  // columns per staging round: one 128-byte row
constexpr int WGMMA_STORE_STAGING_BYTES = WGMMA_STORE_ROWS * GG_SWIZZLE128_ROW_BYTES;

// Step p (0..3) of a panel: its 8 registers v (4j .. 4j + 7 of the accumulator, j = 8 panel +
// 2p) as one stmatrix.x4 into `box`. stmatrix.x4 stores matrices q = 0..3: registers 4j + 2q and
// + 1. Lane 8q + i addresses row i of matrix q: where the D layout puts register 2q of lane 4i
// (row i of that block), 2p chunks further right in the panel.
__device__ __forceinline__ void wgmma_stage_step(const float (&v)[8], int p, uint8_t *box, int lane) {
    const int q = gg_x4_matrix(lane);
    const int st_row = gg_wgmma_d_row(4 * gg_x4_matrix_row(lane), 2 * q);
    const int st_chunk = gg_wgmma_d_col(0, 2 * q) / 8;
    stmatrix_x4(box + gg_swizzle128(st_row, 2 * p + st_chunk), pack_bf16x2(v[0], v[1]), pack_bf16x2(v[2], v[3]),
                pack_bf16x2(v[4], v[5]), pack_bf16x2(v[6], v[7]));
}
// Panel `panel` (64 columns: registers 32 panel .. + 31) of a warp's 16 rows into `box`, a
// 16 x 64 bf16 box, 128B-swizzled (1024-byte aligned: conflict-free, TMA's SWIZZLE_128B).
// Fragment (gg_wgmma_d_row / gg_wgmma_d_col, gg_fragments.h): the 8x8 block of column group j
// and row half h is registers 4j + 2h and + 1 of every lane, laid out as one stmatrix matrix.
template <int ACC>
__device__ __forceinline__ void wgmma_stage_panel(const float (&acc)[ACC], int panel, uint8_t *box, int lane) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        const int r = 32 * panel + 8 * p;
        const float v[8] = {acc[r], acc[r + 1], acc[r + 2], acc[r + 3], acc[r + 4], acc[r + 5], acc[r + 6], acc[r + 7]};
        wgmma_stage_step(v, p, box, lane);
    }
}

// PANELS x 64 columns of acc (the first 32 PANELS registers) to C rows c_row .. c_row + 15
// from column col0 on; only the first valid_rows rows are written (<= 0: none), and only
// columns < n (n % 8 == 0, so an 8-column chunk is wholly inside or wholly past n).
// staging: this warp's own WGMMA_STORE_STAGING_BYTES (1024-byte aligned: conflict-free).
// The whole warp calls it.
template <int PANELS, int ACC>
__device__ __forceinline__ void wgmma_store_warp_rows(const float (&acc)[ACC], uint8_t *staging,
                                                      uint16_t *__restrict__ C, int n, int c_row,
                                                      int valid_rows, int col0, int lane) {
    static_assert(PANELS * 32 <= ACC, "each 64-column panel is 32 accumulator registers");
    if (valid_rows <= 0) return;  // warp-uniform: rows past the expert's end are not ours
#pragma unroll
    for (int panel = 0; panel < PANELS; ++panel) {
        const int col = col0 + panel * WGMMA_STORE_PANEL_N;
        if (col >= n) break;  // warp-uniform: the rest of the tile is past n
        __syncwarp();         // the previous panel's reads of the buffer are done
        wgmma_stage_panel(acc, panel, staging, lane);
        __syncwarp();
        // Read back 16-byte chunks: lane covers (row idx / 8, chunk idx % 8), 4 rows per pass.
#pragma unroll
        for (int pass = 0; pass < WGMMA_STORE_ROWS * 8 / 32; ++pass) {
            const int idx = pass * 32 + lane, row = idx >> 3, chunk = idx & 7;
            const uint4 v = *reinterpret_cast<const uint4 *>(staging + gg_swizzle128(row, chunk));
            if (row < valid_rows && col + chunk * 8 < n)
                *reinterpret_cast<uint4 *>(C + (size_t)(c_row + row) * n + col + chunk * 8) = v;
        }
    }
}

// A warp's 16 rows through TMA stores, from values made 8 registers at a time: fill(r, v) sets
// v to registers r .. r + 7 of the row's accumulator (r = 32 panel + 8 p) just before they are
// staged, so only 8 are live at once. Panel p goes into box p of `staging` (this warp's own
// PANELS x WGMMA_STORE_STAGING_BYTES, 1024-byte aligned), then lane 0 stores each box at
// (col0 + 64 p, c_row, z) of `map` (3-D, box {64, 16, 1}, SWIZZLE_128B) as one bulk group.
// The map clips rows and columns past its edges; boxes wholly past n are not staged or stored,
// and valid_rows <= 0 (rows wholly past the edge) stores nothing. Before staging, lane 0 waits
// for the warp's previous group to have read its boxes; before the kernel ends, it must wait
// for the last (wgmma_store_tma_drain). The whole warp calls both.
template <int PANELS, class FILL>
__device__ __forceinline__ void wgmma_store_warp_rows_tma_fill(FILL &&fill, uint8_t *staging, const void *map, int n,
                                                               int c_row, int valid_rows, int col0, int z, int lane) {
    if (valid_rows <= 0) return;  // warp-uniform
    if (lane == 0) bulk_wait_group_read<0>();
    __syncwarp();  // the boxes are free
#pragma unroll
    for (int panel = 0; panel < PANELS; ++panel)
        if (col0 + panel * WGMMA_STORE_PANEL_N < n)
#pragma unroll
            for (int p = 0; p < 4; ++p) {
                float v[8];
                fill(32 * panel + 8 * p, v);
                wgmma_stage_step(v, p, staging + panel * WGMMA_STORE_STAGING_BYTES, lane);
            }
    fence_proxy_async_smem();  // each lane's stmatrix writes, before the async proxy reads them
    __syncwarp();
    if (lane == 0) {
#pragma unroll
        for (int panel = 0; panel < PANELS; ++panel)
            if (col0 + panel * WGMMA_STORE_PANEL_N < n)
                tma_store_3d(map, staging + panel * WGMMA_STORE_STAGING_BYTES, col0 + panel * WGMMA_STORE_PANEL_N,
                             c_row, z);
        bulk_commit_group();
    }
}
// The same from an accumulator's registers (the wgrad kernels' dB tiles); _fill above serves a
// sum of fp32 partials beside live accumulators (their split fix-up).
template <int PANELS, int ACC>
__device__ __forceinline__ void wgmma_store_warp_rows_tma(const float (&acc)[ACC], uint8_t *staging,
                                                          const void *map, int n, int c_row, int valid_rows,
                                                          int col0, int z, int lane) {
    static_assert(PANELS * 32 <= ACC, "each 64-column panel is 32 accumulator registers");
    wgmma_store_warp_rows_tma_fill<PANELS>(
        [&](int r, float (&v)[8]) {
#pragma unroll
            for (int i = 0; i < 8; ++i) v[i] = acc[r + i];
        },
        staging, map, n, c_row, valid_rows, col0, z, lane);
}
// Lane 0's stores complete (written, not only read) before the CTA may exit.
__device__ __forceinline__ void wgmma_store_tma_drain(int lane) {
    if (lane == 0) bulk_wait_group<0>();
}

// The first COLS columns of acc (COLS / 2 registers) as fp32 to C [.. x ldc] rows c_row ..
// c_row + 15, columns col0 on; only rows < valid_rows (<= 0: none) and columns < n (any n: no
// alignment needed, each value is its own 4-byte store). A lane's registers 4j .. 4j + 3 are
// two adjacent columns in two rows 8 apart (gg_wgmma_d_row / gg_wgmma_d_col, the warp's rows
// from 0), so the four lanes of a row write 32 contiguous bytes per register pair: whole
// sectors after the L2 merges a pair. The whole warp calls it, or any subset.
template <int COLS, int ACC>
__device__ __forceinline__ void wgmma_store_f32_warp_rows(const float (&acc)[ACC], float *__restrict__ C,
                                                          size_t ldc, int n, int c_row, int valid_rows,
                                                          int col0, int lane) {
    static_assert(COLS % 8 == 0 && COLS / 2 <= ACC, "COLS / 2 accumulator registers, 8 columns at a time");
    if (valid_rows <= 0) return;
#pragma unroll
    for (int i = 0; i < COLS / 2; ++i) {
        const int row = gg_wgmma_d_row(lane, i), col = col0 + gg_wgmma_d_col(lane, i);
        if (row < valid_rows && col < n) C[(size_t)(c_row + row) * ldc + col] = acc[i];
    }
}

}  // namespace gg
