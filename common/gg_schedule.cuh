// Device-side tile schedule for persistent grouped-GEMM kernels (k3_wgmma, k3_tcgen05).
//
// Why on the device: the per-expert row counts live in device memory (GgLaunch.row_offsets)
// and change from launch to launch. Building the tile list on the device means no host copy,
// no host sync, and a launch that a CUDA graph can replay with new m_e.
//
// Interface (kept stable; both k3 stages use it):
//
//   __shared__ gg::TileSchedule<MAX_EXPERTS> sched;      // ~2 KiB for 256 experts
//   sched.build(row_offsets, experts, tokens, n, block_n, adaptive [, pairing]);
//                                                        // ALL threads of the block call it;
//                                                        // it ends with __syncthreads()
//   for (int t = blockIdx.x; t < sched.total(); t += gridDim.x) {
//       const gg::SchedTile tile = sched.at(t [, rank]); // any thread, any time after build
//       ...
//   }
//
//   SchedTile {expert, row0, rows, height, col0}:
//     rows   valid rows, 1..height; rows past row0 + rows belong to the next expert and must
//            never be stored;
//     height rows the hardware computes: 128, or 64 for an expert's remainder of 1..64 rows
//            when adaptive (common/gg_adaptive.h); always 128 when not adaptive;
//     col0   multiple of block_n; the tile may hang past n (mask columns >= n).
//   Also readable after build: experts, row_start[e] (clamped offsets), expert_rows(e) —
//   for a kernel that derives its own tiling from the same offsets (k3_tcgen05's pairs).
//
//   Pairing (k3_wgmma's 2-CTA clusters): every entry is two tiles, at(t, rank) returns tile
//   `rank` (0 or 1) of entry t, and total() counts entries.
//     Pairing::rows  row tiles 2p and 2p + 1 of one expert and column block (they share B).
//                    An expert with an odd number of row tiles leaves tile 1 of its last
//                    pair idle: rows = 0, height = 0 (expert and col0 still valid).
//     Pairing::cols  column blocks 2q and 2q + 1 of one row tile (they share A: same expert,
//                    row0, rows, height). With an odd number of column blocks, tile 1 of the
//                    last pair has col0 >= n: nothing to store, but its rows stay valid.
//
// Order: expert-major. Inside expert e, with mt = number of row tiles (= ceil(m_e / 128) under
// both policies) and nb = ceil(n / block_n) column blocks, local tile j is row tile j % mt
// of column block j / mt (entries likewise: pair of row tiles j % ceil(mt / 2) in column
// block j / ceil(mt / 2), or row tile j % mt in pair of column blocks j / mt). Why:
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
#include "gg_adaptive.h"

namespace gg {

enum class Pairing { none, rows, cols };  // how entries pair tiles for 2-CTA clusters

struct SchedTile {
    int expert;  // which B_e
    int row0;    // first row in A and C
    int rows;    // valid rows (1..height; 0 only for an idle Pairing::rows tile)
    int height;  // rows computed: 128 or 64 (0: idle Pairing::rows tile)
    int col0;    // first column in C
};

template <int MAX_EXPERTS>
struct TileSchedule {
    static_assert(MAX_EXPERTS >= 1 && MAX_EXPERTS <= 1024, "one warp scans 32 lanes x 32 experts");

    int row_start[MAX_EXPERTS + 1];   // clamped copy of row_offsets
    int tile_start[MAX_EXPERTS + 1];  // exclusive prefix sum of entries per expert
    int experts;
    int block_n;
    int adaptive;
    Pairing pairing;

    // Collective: every thread of the block must call it (it contains __syncthreads()).
    // Cost: one global read of the offsets per thread, then one warp does 8 values per lane
    // and two 5-step shuffle scans; well under a microsecond after the offsets arrive.
    __device__ void build(const int *row_offsets, int num_experts, int tokens, int n, int bn,
                          bool adapt, Pairing pair = Pairing::none) {
        num_experts = min(num_experts, MAX_EXPERTS);  // can_implement refuses more; never overflow
        const int nb = (n + bn - 1) / bn;
        // Entries per expert = row groups x column groups.
        const int row_group = pair == Pairing::rows ? 2 : 1;
        const int col_groups = pair == Pairing::cols ? (nb + 1) / 2 : nb;
        if (threadIdx.x == 0) {
            experts = num_experts;
            block_n = bn;
            adaptive = adapt ? 1 : 0;
            pairing = pair;
        }
        for (int e = threadIdx.x; e <= num_experts; e += blockDim.x)
            row_start[e] = min(max(__ldg(row_offsets + e), 0), tokens);
        __syncthreads();
        if (threadIdx.x < 32) {  // warp 0: tiles per expert, exclusive prefix sum
            constexpr int PER_LANE = (MAX_EXPERTS + 31) / 32;
            const int lane = threadIdx.x, first = lane * PER_LANE;
            int count[PER_LANE], chunk_sum = 0;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const int e = first + i;
                count[i] = e < num_experts
                               ? (m_tiles(expert_rows(e)) + row_group - 1) / row_group * col_groups
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

    __device__ int total() const { return tile_start[experts]; }

    // Tile `index` (0 <= index < total()) of the expert-major order described above; when
    // paired, tile `rank` of entry `index`.
    __device__ SchedTile at(int index, int rank = 0) const {
        // Largest e with tile_start[e] <= index; it owns at least one tile because
        // tile_start[e + 1] > index.
        int lo = 0, hi = experts;  // tile_start[lo] <= index < tile_start[hi]
        while (hi - lo > 1) {
            const int mid = (lo + hi) >> 1;
            if (tile_start[mid] <= index) lo = mid;
            else hi = mid;
        }
        const int m = expert_rows(lo);
        int t128, t64;
        const int mt_count = gg_adaptive_m_tiles(m, &t128, &t64);
        const int local = index - tile_start[lo];
        int mt, nb;  // row tile, column block
        if (pairing == Pairing::rows) {
            const int pair_rows = (mt_count + 1) / 2;
            mt = 2 * (local % pair_rows) + rank;
            nb = local / pair_rows;
        } else {
            mt = local % mt_count;
            nb = pairing == Pairing::cols ? 2 * (local / mt_count) + rank : local / mt_count;
        }
        SchedTile t;
        t.expert = lo;
        t.row0 = row_start[lo] + 128 * mt;  // the one 64-row tile comes last: starts at 128 mt
        t.col0 = nb * block_n;              // cols: past n for an odd column count's last pair
        if (mt >= mt_count) {  // rows: tile 1 of an expert's last pair, odd row-tile count
            t.rows = 0;
            t.height = 0;
            return t;
        }
        t.rows = min(128, m - 128 * mt);
        t.height = (adaptive && mt >= t128) ? 64 : 128;  // mt == t128 only for the 1..64 remainder
        return t;
    }

    // Rows of expert e. Offsets are clamped, not sorted: a decreasing pair gives 0 rows, and
    // expert e's rows always lie inside [row_start[e], row_start[e + 1]) within [0, tokens].
    __device__ int expert_rows(int e) const { return max(0, row_start[e + 1] - row_start[e]); }

    // Row tiles for an expert of m rows. Adaptive and fixed 128 give the same count
    // (ceil(m / 128)); only the height of the last tile differs.
    __device__ static int m_tiles(int m) {
        int t128, t64;
        return gg_adaptive_m_tiles(m, &t128, &t64);
    }
};

}  // namespace gg
