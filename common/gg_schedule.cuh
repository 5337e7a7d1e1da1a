// Device-side tile schedule for persistent grouped-GEMM kernels (k3_wgmma, k3_tcgen05).
//
// Why on the device: the per-expert row counts live in device memory (GgLaunch.row_offsets)
// and change from launch to launch. Building the tile list on the device means no host copy,
// no host sync, and a launch that a CUDA graph can replay with new m_e.
//
// Interface (both k3 stages use it):
//
//   __shared__ gg::TileSchedule<MAX_EXPERTS, TILE_M> sched;  // ~2 KiB for 256 experts
//   sched.build(row_offsets, experts, tokens, n, block_n, adaptive [, pairing]);
//                                                        // ALL threads of the block call it;
//                                                        // it ends with __syncthreads()
//   for (int t = blockIdx.x; t < sched.total(); t += gridDim.x) {
//       const gg::SchedTile tile = sched.at(t [, rank]); // any thread, any time after build
//       ...
//   }
//
// TILE_M is the tile height: 128 for k3_wgmma, 256 for k3_tcgen05's CTA-pair tiles. With
// `adaptive` (k3_wgmma, common/gg_adaptive.h) an expert's remainder of 1..TILE_M / 2 rows gets
// a tile of half the height. The tile fields, the pairings (GG_PAIR_ROWS, GG_PAIR_COLS: every
// entry is two tiles, at(t, rank) returns tile `rank` of entry t, total() counts entries) and
// the order are defined with the arithmetic in gg_schedule.h, which tests/suite_schedule.c
// checks on the CPU; this file adds the block-wide build and the shared-memory table.
//
// Why this order (expert-major, the row tiles of one column block adjacent):
//   * L2 reuse. A persistent grid with a static stride runs a contiguous window of ~gridDim.x
//     tiles at a time. Consecutive tiles share an expert, and the row tiles of one column block
//     are adjacent, so the B_e column panel is fetched from DRAM once and re-read from L2 by
//     the row tiles next to it; the window spans only a few experts' B at a time.
//   * DRAM locality. Tiles running at the same moment read neighbouring column blocks of the
//     same B_e rows.
//   * Tail. Tiles cost the same (a 64-row tile about half), and the static stride gives every
//     CTA floor or ceil of total/gridDim.x of them, so the end of the launch is ragged by at
//     most one tile whatever the skew: a 4793-row expert is spread over every SM instead of
//     queuing behind one.
//
// Robustness: row offsets are clamped to [0, tokens] and an expert's row count to >= 0, so a
// bad offset table can produce wrong results but never an out-of-bounds row.
#pragma once
#include "gg_schedule.h"

namespace gg {

using SchedTile = GgSchedTile;

template <int MAX_EXPERTS, int TILE_M = 128>
struct TileSchedule {
    static_assert(MAX_EXPERTS >= 1 && MAX_EXPERTS <= 1024, "one warp scans 32 lanes x 32 experts");

    int row_start[MAX_EXPERTS + 1];   // clamped copy of row_offsets
    int tile_start[MAX_EXPERTS + 1];  // exclusive prefix sum of entries per expert
    GgSchedParams params;             // experts, block_n, adaptive, pairing

    // Collective: every thread of the block must call it (it contains __syncthreads()).
    // Cost: one global read of the offsets per thread, then one warp does 8 values per lane
    // and one 5-step shuffle scan; well under a microsecond after the offsets arrive.
    __device__ void build(const int *row_offsets, int num_experts, int tokens, int n, int bn,
                          bool adapt, GgPairing pair = GG_PAIR_NONE) {
        num_experts = min(num_experts, MAX_EXPERTS);  // can_implement refuses more; never overflow
        const int row_group = gg_sched_row_group(pair);
        const int col_groups = gg_sched_col_groups((n + bn - 1) / bn, pair);
        if (threadIdx.x == 0) {
            params.experts = num_experts;
            params.block_n = bn;
            params.adaptive = adapt ? 1 : 0;
            params.pairing = pair;
        }
        for (int e = threadIdx.x; e <= num_experts; e += blockDim.x)
            row_start[e] = gg_sched_clamp(__ldg(row_offsets + e), tokens);
        __syncthreads();
        if (threadIdx.x < 32) {  // warp 0: entries per expert, exclusive prefix sum
            constexpr int PER_LANE = (MAX_EXPERTS + 31) / 32;
            const int lane = threadIdx.x, first = lane * PER_LANE;
            int count[PER_LANE], chunk_sum = 0;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const int e = first + i;
                count[i] = e < num_experts ? gg_sched_entries(gg_sched_expert_rows(row_start, e),
                                                              TILE_M, row_group, col_groups)
                                           : 0;
                chunk_sum += count[i];
            }
            int inclusive = chunk_sum;  // becomes the sum over lanes 0..lane
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                const int v = __shfl_up_sync(0xffffffffu, inclusive, d);
                if (lane >= d) inclusive += v;
            }
            int start = inclusive - chunk_sum;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                if (first + i < num_experts) tile_start[first + i] = start;
                start += count[i];
            }
            if (lane == 31) tile_start[num_experts] = inclusive;
        }
        __syncthreads();
    }

    __device__ int total() const { return tile_start[params.experts]; }

    // Tile `index` (0 <= index < total()) of the expert-major order; when paired, tile `rank`
    // of entry `index`.
    __device__ SchedTile at(int index, int rank = 0) const {
        return gg_sched_at(row_start, tile_start, &params, index, rank, TILE_M);
    }
};

}  // namespace gg
