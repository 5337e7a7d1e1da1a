// Device-side tile schedule for persistent grouped-GEMM kernels (k3_wgmma, k3_tcgen05).
//
// Why on the device: the per-expert row counts live in device memory (GgLaunch.row_offsets)
// and change from launch to launch. Building the tile list on the device means no host copy,
// no host sync, and a launch that a CUDA graph can replay with new m_e.
//
// Interface (both k3 stages use it):
//
//   __shared__ gg::TileSchedule<MAX_EXPERTS, TILE_M> sched;  // ~2 KiB, any MAX_EXPERTS <= 4096
//   sched.build(row_offsets, experts, tokens, n, block_n, adaptive [, pairing]);
//                                                        // ALL threads of the block call it;
//                                                        // it ends with __syncthreads()
//   for (int t = blockIdx.x; t < sched.total(); t += gridDim.x) {
//       const gg::SchedTile tile = sched.at(t [, rank]); // any thread, any time after build
//       ...
//   }
//
// TILE_M is the tile height: 128 for k3_wgmma, 256 for k3_tcgen05's CTA-pair tiles and k4's
// 256-row ablation (cp_async_m256). With `adaptive` (k3_wgmma, common/gg_adaptive.h; always in
// that ablation) an expert's remainder of 1..TILE_M / 2 rows gets a tile of half the height.
// The tile fields, the pairings (GG_PAIR_ROWS, GG_PAIR_COLS: every entry is two tiles,
// at(t, rank) returns tile `rank` of entry t, total() counts entries) and the order are defined
// with the arithmetic in gg_schedule.h, which tests/suite_schedule.c checks on the CPU; this file
// adds the block-wide build and the shared-memory table.
//
// The table: a two-level index (gg_schedule.h). Shared memory holds at most 256 groups + 1
// (row_start, tile_start: ~2 KiB), each of span = ceil(experts / 256) consecutive experts. Up
// to 256 experts a group is an expert: at() reads shared memory only, as a one-level table
// would. Above, at() binary-searches the group, then walks its <= 16 experts, reading their row
// offsets from global memory GG_SCHED_BATCH (2) independent loads at a time (cache hits after
// the build; more at once spilled registers in the ping-pong consumers). MAX_EXPERTS <= 256
// (k4's GEMM1) compiles the walk out.
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
// bad offset table can produce wrong results but never an out-of-bounds row. The offsets must
// not change while the kernel runs: with more than 256 experts at() reads them again.
#pragma once
#include "gg_schedule.h"

namespace gg {

// The sum of v over lanes 0..lane of a full warp (a shuffle scan, log2 32 steps): the scans of
// the schedule's tables here, of k5_wgrad's and of k4's permutation.
__device__ __forceinline__ int warp_inclusive_sum(int v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    return v;
}

using SchedTile = GgSchedTile;

template <int MAX_EXPERTS, int TILE_M = 128>
struct TileSchedule {
    // Groups in the table and experts per group at most: 256 and 16 for 4096 experts.
    static constexpr int GROUPS = MAX_EXPERTS < GG_SCHED_MAX_GROUPS ? MAX_EXPERTS : GG_SCHED_MAX_GROUPS;
    static constexpr int MAX_SPAN = (MAX_EXPERTS + GROUPS - 1) / GROUPS;
    static_assert(MAX_EXPERTS >= 1 && MAX_EXPERTS <= GG_SCHED_MAX_EXPERTS,
                  "1..4096 experts: 256 groups of at most 16");
    static_assert(GROUPS <= 1024, "one warp scans 32 lanes x 32 groups");

    int row_start[GROUPS + 1];   // clamped row offset of each group's first expert, and the end
    int tile_start[GROUPS + 1];  // exclusive prefix sum of entries per group
    const int *row_offsets;      // read again by at() when a group spans several experts
    GgSchedParams params;        // experts, block_n, adaptive, pairing, tokens, span, groups

    // Collective: every thread of the block must call it (it contains __syncthreads()).
    // Cost: each thread takes a group (or none) and reads its span + 1 offsets, then one warp
    // does 8 values per lane and one 5-step shuffle scan; well under a microsecond after the
    // offsets arrive.
    __device__ void build(const int *offsets, int num_experts, int tokens, int n, int bn,
                          bool adapt, GgPairing pair = GG_PAIR_NONE) {
        // can_implement refuses more; never overflow the table
        num_experts = max(0, min(num_experts, MAX_EXPERTS));
        const GgSchedParams p =
            gg_sched_params(num_experts, tokens, n, bn, adapt ? 1 : 0, pair, GROUPS);
        if (threadIdx.x == 0) {
            params = p;
            row_offsets = offsets;
        }
        for (int g = threadIdx.x; g <= p.groups; g += blockDim.x) {
            row_start[g] = gg_sched_group_row(offsets, &p, g);
            if (g < p.groups) tile_start[g] = gg_sched_group_entries(offsets, &p, g, TILE_M, MAX_SPAN);
        }
        __syncthreads();
        if (threadIdx.x < 32) {  // warp 0: exclusive prefix sum of the entries per group, in place
            constexpr int PER_LANE = (GROUPS + 31) / 32;
            const int lane = threadIdx.x, first = lane * PER_LANE;
            int count[PER_LANE], chunk_sum = 0;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                count[i] = first + i < p.groups ? tile_start[first + i] : 0;
                chunk_sum += count[i];
            }
            const int inclusive = warp_inclusive_sum(chunk_sum, lane);  // over lanes 0..lane
            int start = inclusive - chunk_sum;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                if (first + i < p.groups) tile_start[first + i] = start;
                start += count[i];
            }
            if (lane == 31) tile_start[p.groups] = inclusive;
        }
        __syncthreads();
    }

    __device__ int total() const { return tile_start[params.groups]; }

    // Tile `index` (0 <= index < total()) of the expert-major order; when paired, tile `rank`
    // of entry `index`.
    __device__ SchedTile at(int index, int rank = 0) const {
        return gg_sched_at(row_start, tile_start, row_offsets, &params, index, rank, TILE_M, MAX_SPAN);
    }
};

}  // namespace gg
