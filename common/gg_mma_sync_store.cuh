// The register-direct epilogue of the mma.sync stages (k1_mmasync, k2_tma_ws): each warp
// writes its accumulators straight to C from the m16n8k16 accumulator layout, no staging.
#pragma once
#include <stdint.h>

#include "gg_fragments.h"
#include "gg_kernel.h"
#include "ptx/ptx_ampere.cuh"

namespace gg {

// acc[fm][fn] is the m16n8 accumulator of rows warp_row + 16 fm, columns warp_col + 8 fn of
// the tile, laid out as gg_mma_c_row / gg_mma_c_col say (gg_fragments.h): registers {2h, 2h+1}
// of a lane are one row, two adjacent columns. Rows >= tile.rows belong to the next expert (or
// lie past the end of C): storing them would overwrite another expert's output. Columns >= n
// do not exist. n is even and the column is even, so col < n implies col + 1 < n and the
// 4-byte store is aligned.
template <int FRAG_M, int FRAG_N>
__device__ __forceinline__ void store_mma_sync_tile(const float (&acc)[FRAG_M][FRAG_N][4], uint16_t *C, int n,
                                                    const GgTile &tile, int warp_row, int warp_col, int lane) {
#pragma unroll
    for (int fm = 0; fm < FRAG_M; ++fm) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = warp_row + fm * 16 + gg_mma_c_row(lane, 2 * half);
            if (r >= tile.rows) continue;
            uint16_t *c_row = C + (size_t)(tile.row0 + r) * n + tile.col0;
#pragma unroll
            for (int fn = 0; fn < FRAG_N; ++fn) {
                const int c = warp_col + fn * 8 + gg_mma_c_col(lane, 2 * half);
                if (tile.col0 + c < n)
                    *reinterpret_cast<uint32_t *>(c_row + c) =
                        pack_bf16x2(acc[fm][fn][2 * half], acc[fm][fn][2 * half + 1]);
            }
        }
    }
}

}  // namespace gg
