// k3_wgmma — stage 3 on Hopper: asynchronous warpgroup MMA from shared-memory descriptors,
// warp-specialized, persistent, adaptive BM, scheduled on the device (sm_90a).
//
// What changed since k2: the math moves from ldmatrix + mma.sync (per warp, operands through
// registers) to wgmma.mma_async (per warpgroup of 4 warps, A and B read by the tensor cores
// straight from the 128B-swizzled TMA boxes through 64-bit descriptors, common/gg_desc_sm90.h).
// A producer warpgroup feeds two consumer warpgroups; setmaxnreg moves registers to the
// consumers. The grid is persistent (one CTA per SM) and walks a tile list that every CTA
// derives from the device-side row offsets (common/gg_schedule.cuh): no host tile list, no
// host sync, so a CUDA graph can replay the launch with new m_e. The _mc / _mca configurations
// pair two CTAs in a cluster and multicast the operand their tiles share (B / A) to both.
//
// Block tile   128 (or 64) x BLOCK_N x BLOCK_K = 64; BLOCK_N = 192 for the main config
//              (N = 2688 = 14 x 192), 128 or 256 for the shape ablations. 128-row tile:
//              consumer c computes rows 64c..64c+63, 4 wgmma.m64nBLOCK_Nk16 per stage.
//              64-row tile (an expert's remainder of 1..64 rows, common/gg_adaptive.h): both
//              consumers take all 64 rows, split by columns at a 64-column panel, consumer 0
//              [0, SPLIT_N0), consumer 1 the rest (192: 128 + 64; 256: 128 + 128; 128: 64 +
//              64), each in a prefix of the same accumulator registers.
// Threads      384 = warpgroup 0 producer (thread 0 issues every TMA; setmaxnreg.dec 40) +
//              warpgroups 1, 2 consumers (setmaxnreg.inc 232): 128 x 40 + 256 x 232 = 64,512
//              of the 65,536 registers. __launch_bounds__(384, 1) lets setmaxnreg take effect.
// Shared mem   dynamic: 1 KiB alignment slack + STAGES x (A 128 x 64 + B 64 x BLOCK_N, bf16)
//              + 16 KiB epilogue staging (2 KiB per consumer warp). BLOCK_N 192: 5 stages of
//              40 KiB, 222,208 B; 128: 6 x 32 KiB, 214,016 B; 256: 4 x 48 KiB, 214,016 B.
//              Static: 2 STAGES mbarriers + the schedule (~2.1 KiB).
// Pipeline     full[s] (count 1: the producer's arrive.expect_tx, completed by TMA bytes),
//              empty[s] (count 8 x CLUSTER: lane 0 of every consumer warp of every CTA that
//              reads what this CTA's producer writes). The ring position (GgPipe: stage,
//              phase) runs on across tiles in all roles: consumers wait full with `phase`, the
//              producer waits empty with `phase ^ 1` (the first pass finds every stage free). A consumer keeps one wgmma
//              group in flight and releases a stage when its group retires. A consumer with
//              no rows still waits full and arrives empty for every stage.
// Pairs        Both CTAs of a cluster walk the same entries (gg_schedule.cuh). _mc: row tiles
//              2p, 2p + 1 of one expert and column block; each CTA loads its own A and the B
//              panels p with p % 2 == rank, multicast to both. _mca: column blocks 2q, 2q + 1
//              of one row tile; each loads its own B and the A boxes h with h % 2 == rank.
//              A full barrier expects every byte of its CTA's stage, whoever issued it; a
//              stage's release goes to both CTAs' empty barriers, since both producers write
//              it. A pair tile without rows (_mc) or columns (_mca) still loads its share and
//              releases its stages; it computes and stores nothing.
// Epilogue     per consumer warp, 16 rows x 64 columns at a time (common/gg_wgmma_store.cuh):
//              stmatrix into a swizzled 2 KiB buffer, then 16-byte row-masked global stores.
//              A TMA store of the box would write rows past the expert's end.
// Preconditions  k % 64 == 0, k >= 64; n % 8 == 0; experts <= 256; A, B, C 16-byte aligned.
// Run it       build/bin/ggemm run --kernel k3_wgmma
//              (ablations: k3_wgmma_tile, _persist, _solo64, _n128, _n256, _mc, _mc_n256, _mca)
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>

#include "gg_check.h"
#include "gg_desc_sm90.h"
#include "gg_kernel.h"
#include "gg_launch.h"
#include "gg_pipeline.h"
#include "gg_schedule.cuh"
#include "gg_swizzle.h"
#include "gg_tma.h"
#include "gg_wgmma_store.cuh"
#include "k3_wgmma.h"
#include "ptx/ptx_ampere.cuh"
#include "ptx/ptx_tma.cuh"
#include "ptx/ptx_wgmma.cuh"

namespace {

constexpr int BLOCK_M = 128, BLOCK_K = 64, WG_ROWS = 64;
constexpr int THREADS = 384, WG_THREADS = 128, CONSUMER_WARPS = 8;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int MAX_EXPERTS = 256;
constexpr int PANEL_N = 64;                               // B columns per TMA box: a 128 B row
constexpr int ROW_BYTES = BLOCK_K * 2;                    // one A row / one B k-row of a stage
constexpr int HALF_A_BYTES = WG_ROWS * ROW_BYTES;         // one A box: 64 rows
constexpr int A_BYTES = BLOCK_M * ROW_BYTES;
constexpr int PANEL_BYTES = BLOCK_K * PANEL_N * 2;        // one B box: 64 k x 64 columns
constexpr int STAGING_ROWS = gg::WGMMA_STORE_ROWS;        // a warp's rows of the accumulator
constexpr int STAGING_WARP_BYTES = gg::WGMMA_STORE_STAGING_BYTES;
constexpr int SWIZZLE_ALIGN = 1024;
constexpr int SMEM_TARGET = 220 * 1024;                   // ring + staging + slack
static_assert(ROW_BYTES == GG_SWIZZLE128_ROW_BYTES && PANEL_N * 2 == GG_SWIZZLE128_ROW_BYTES,
              "a stage row must be one 128-byte swizzle row");
static_assert(PANEL_N == gg::WGMMA_STORE_PANEL_N, "the epilogue stores whole B panels");
static_assert(HALF_A_BYTES % SWIZZLE_ALIGN == 0 && PANEL_BYTES % SWIZZLE_ALIGN == 0,
              "every TMA box and wgmma operand must start on a 1024-byte swizzle atom");
static_assert(CONSUMER_REGS * 2 * WG_THREADS + PRODUCER_REGS * WG_THREADS <= 65536,
              "setmaxnreg budget exceeds the register file");

// Who computes an expert's 64-row remainder tile (the ablation between k3_wgmma_solo64 and
// k3_wgmma). fixed128: there is none, every tile is 128 rows.
enum class Rows { fixed128, solo64, split64 };
// CTAs per cluster: a pairing (gg_schedule.cuh) puts the two tiles of an entry on two CTAs.
__host__ __device__ constexpr int cluster_size(GgPairing pair) {
    return pair == GG_PAIR_NONE ? 1 : 2;
}

template <int BLOCK_N>
struct Ring {
    static_assert(BLOCK_N % PANEL_N == 0, "a B stage is whole 64-column panels");
    static constexpr int PANELS = BLOCK_N / PANEL_N;
    static constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int STAGING_BYTES = CONSUMER_WARPS * STAGING_WARP_BYTES;
    static constexpr int STAGES = (SMEM_TARGET - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
    static constexpr int STAGING_OFFSET = STAGES * STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + STAGING_BYTES;
    // A 64-row tile's columns: consumer 0 takes half rounded up to a panel, consumer 1 the
    // rest. An N-major 128B-swizzled B operand must start on a panel: inside a 128-byte row
    // the next 64 columns are LBO away, so a start in mid-panel would read wrong data.
    static constexpr int SPLIT_N0 = (BLOCK_N / 2 + PANEL_N - 1) / PANEL_N * PANEL_N;
    static constexpr int SPLIT_N1 = BLOCK_N - SPLIT_N0;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(STAGE_BYTES % SWIZZLE_ALIGN == 0, "stages must keep the 1024-byte alignment");
    static_assert(SPLIT_N1 > 0, "both consumers need columns of a 64-row tile");
};

// The tile a CTA works on: from the device schedule (half `rank` of a pair entry when the
// CTAs are paired), or (k3_wgmma_tile) from the host list.
template <bool PERSISTENT>
__device__ __forceinline__ gg::SchedTile tile_at(const gg::TileSchedule<MAX_EXPERTS> &sched,
                                                 const GgTile *tiles, int t, int rank) {
    if constexpr (PERSISTENT) {
        return sched.at(t, rank);
    } else {
        const GgTile g = tiles[t];
        return gg::SchedTile{g.expert, g.row0, g.rows, BLOCK_M, g.col0};
    }
}

// A consumer warpgroup's walk over the ring. The ring position runs on across tiles.
template <int STAGES, int STAGE_BYTES, bool PAIRED>
struct ConsumerRing {
    uint64_t *full, *empty;
    uint32_t base;  // shared address of stage 0
    uint32_t peer;  // the other CTA of the cluster
    bool leader;    // lane 0: arrives for its warp
    GgPipe pipe = {0, 0};

    __device__ __forceinline__ void wait_full() const {
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
    }
    // Stage s may be overwritten. In a CTA pair both producers write into it (multicast), so
    // both CTAs' empty barriers hear about it.
    __device__ __forceinline__ void release(int s) const {
        if (!leader) return;
        gg::mbarrier_arrive(&empty[s]);
        if constexpr (PAIRED) gg::mbarrier_arrive_cluster(&empty[s], peer);
    }
    // No rows for this consumer: follow the ring without reading it.
    __device__ __forceinline__ void skip_tile(int k_blocks) {
        for (int kb = 0; kb < k_blocks; ++kb) {
            wait_full();
            release(pipe.stage);
            gg_pipe_advance(&pipe, STAGES);
        }
    }
    // One tile: N columns into acc[0 .. N/2 - 1], A from a_off and B from b_off (a panel
    // boundary) inside every stage.
    template <int N, int ACC>
    __device__ __forceinline__ void mma_tile(float (&acc)[ACC], uint32_t a_off, uint32_t b_off,
                                             int k_blocks) {
        int prev_stage = 0;
        for (int kb = 0; kb < k_blocks; ++kb) {
            wait_full();
            const uint32_t a_addr = base + pipe.stage * STAGE_BYTES + a_off;
            const uint32_t b_addr = base + pipe.stage * STAGE_BYTES + A_BYTES + b_off;
            const uint64_t desc_a = gg_wgmma_desc_a_kmajor_sw128(a_addr);
            const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(b_addr, PANEL_BYTES);
            gg::wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BLOCK_K / 16; ++kk)
                gg::wgmma_m64k16_bf16<N, 0, 1>(
                    acc, gg_wgmma_desc_advance(desc_a, kk * GG_WGMMA_KMAJOR_K16_BYTES),
                    gg_wgmma_desc_advance(desc_b, kk * GG_WGMMA_MNMAJOR_K16_BYTES),
                    (kb > 0 || kk > 0) ? 1 : 0);  // the tile's first k16 overwrites acc
            gg::wgmma_commit_group();
            gg::wgmma_wait_group<1>();  // the previous stage's group has read its operands
            if (kb > 0) release(prev_stage);
            prev_stage = pipe.stage;
            gg_pipe_advance(&pipe, STAGES);
        }
        gg::wgmma_wait_group<0>();
        release(prev_stage);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) gg::wgmma_fence_operand(acc[i]);
    }
};

template <int BLOCK_N, bool PERSISTENT, Rows ROWS, GgPairing PAIR>
__global__ void __launch_bounds__(THREADS, 1)
k3_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          uint16_t *__restrict__ C, const int *__restrict__ row_offsets,
          const GgTile *__restrict__ tiles, int num_host_tiles, int tokens, int experts, int k, int n) {
    using R = Ring<BLOCK_N>;
    constexpr int STAGES = R::STAGES;
    constexpr int CLUSTER = cluster_size(PAIR);
    static_assert(PERSISTENT || ROWS == Rows::fixed128, "the host tile list is fixed BM = 128");
    static_assert(PERSISTENT || CLUSTER == 1, "CTA pairs come from the device schedule");

    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    // TMA and wgmma swizzle on absolute shared addresses: start the ring on a 1024 B boundary.
    // The offset is the same in both CTAs of a cluster, as multicast requires.
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
    // A pair (cluster) takes entries cluster, cluster + clusters, ...; this CTA is half `rank`.
    const int rank = CLUSTER == 1 ? 0 : (int)gg::cluster_ctarank();
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], CONSUMER_WARPS * CLUSTER);
        }
        gg::fence_mbarrier_init();  // the TMA unit (async proxy) and the peer use these barriers
    }
    if constexpr (PERSISTENT)
        sched.build(row_offsets, experts, tokens, n, BLOCK_N, ROWS != Rows::fixed128, PAIR);
    // Barriers initialised and the schedule built, here and (cluster) in the peer before it
    // multicasts into this CTA or arrives on our barriers.
    if constexpr (CLUSTER == 1) __syncthreads();
    else gg::cluster_sync();
    const int num_tiles = PERSISTENT ? sched.total() : num_host_tiles;
    const int k_blocks = k / BLOCK_K;
    const int wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: one thread issues every TMA load ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = cluster; t < num_tiles; t += clusters) {
                const gg::SchedTile tile = tile_at<PERSISTENT>(sched, tiles, t, rank);
                // A boxes wholly past `tokens` and B panels wholly past n are not loaded: their
                // stale shared memory only feeds rows / columns that are never stored (row i
                // of C reads only row i of A, column j only column j of B). Boxes that hang
                // over the edge are zero-filled by TMA and count in full. A tile without rows
                // (height 0) loads no A. The CTAs of a pair agree on the count of what they
                // share: _mc shares col0 (b_loads), _mca row0 and height (a_loads).
                const int a_boxes = tile.height / WG_ROWS;
                int a_loads = 0, b_loads = 0;
                for (int h = 0; h < a_boxes; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
                for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
                // Everything lands here: what we issue, and the peer's multicast boxes.
                const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES;
                    uint8_t *b_box = a_box + A_BYTES;
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    // Rows from row0 up to the box height, whatever tile.rows is: rows of the
                    // next expert, or zeros past `tokens`. Computed, never stored (epilogue).
                    // A shared box is issued by one CTA for both (same offset and barrier).
                    for (int h = 0; h < a_loads; ++h) {
                        uint8_t *box = a_box + h * HALF_A_BYTES;
                        const int y = tile.row0 + h * WG_ROWS;
                        if constexpr (PAIR != GG_PAIR_COLS)
                            gg::tma_load_2d(box, &tmap_a, kb * BLOCK_K, y, &full[stage]);
                        else if (h % 2 == rank)
                            gg::tma_load_2d_multicast(box, &tmap_a, kb * BLOCK_K, y, &full[stage],
                                                      0x3);
                    }
                    for (int p = 0; p < b_loads; ++p) {
                        uint8_t *box = b_box + p * PANEL_BYTES;
                        const int x = tile.col0 + p * PANEL_N;
                        if constexpr (PAIR != GG_PAIR_ROWS)
                            gg::tma_load_3d(box, &tmap_b, x, kb * BLOCK_K, tile.expert,
                                            &full[stage]);
                        else if (p % 2 == rank)
                            gg::tma_load_3d_multicast(box, &tmap_b, x, kb * BLOCK_K, tile.expert,
                                                      &full[stage], 0x3);
                    }
                }
            }
        }
    } else {
        // ---------------- consumers ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;
        const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        const int warp_row = warp * STAGING_ROWS;  // the warp's rows in its 64-row accumulator
        uint8_t *staging = smem + R::STAGING_OFFSET + (c * 4 + warp) * STAGING_WARP_BYTES;
        ConsumerRing<STAGES, R::STAGE_BYTES, (CLUSTER > 1)> ring{
            full, empty, gg::smem_u32(smem), (uint32_t)(rank ^ 1), lane == 0};
        float acc[BLOCK_N / 2];
        for (int t = cluster; t < num_tiles; t += clusters) {
            const gg::SchedTile tile = tile_at<PERSISTENT>(sched, tiles, t, rank);
            // On a 64-row tile every consumer's warp w holds rows 16w .. 16w + 15 of the tile.
            const int row64 = tile.row0 + warp_row, rows64 = tile.rows - warp_row;
            const bool solo_idle = ROWS == Rows::solo64 && c == 1 && tile.height == WG_ROWS;
            if (tile.height == 0 || tile.col0 >= n || solo_idle) {
                // Nothing to compute: a pair tile without rows (_mc) or columns (_mca), or
                // consumer 1 of a solo 64-row tile.
                ring.skip_tile(k_blocks);
            } else if (tile.height == BLOCK_M) {  // consumer c: rows 64c .. 64c + 63, all columns
                ring.template mma_tile<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks);
                const int row = c * WG_ROWS + warp_row;
                gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + row,
                                                     tile.rows - row, tile.col0, lane);
            } else if constexpr (ROWS == Rows::solo64) {  // 64 rows on consumer 0 alone
                ring.template mma_tile<BLOCK_N>(acc, 0, 0, k_blocks);
                gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, row64, rows64, tile.col0,
                                                     lane);
            } else if constexpr (ROWS == Rows::split64) {  // 64 rows, columns split at a panel
                if (c == 0) {
                    ring.template mma_tile<R::SPLIT_N0>(acc, 0, 0, k_blocks);
                    gg::wgmma_store_warp_rows<R::SPLIT_N0 / PANEL_N>(acc, staging, C, n, row64,
                                                                     rows64, tile.col0, lane);
                } else {
                    ring.template mma_tile<R::SPLIT_N1>(acc, 0, R::SPLIT_N0 / PANEL_N * PANEL_BYTES,
                                                        k_blocks);
                    gg::wgmma_store_warp_rows<R::SPLIT_N1 / PANEL_N>(
                        acc, staging, C, n, row64, rows64, tile.col0 + R::SPLIT_N0, lane);
                }
            }
        }
    }
    if constexpr (CLUSTER > 1) {
        // No CTA exits while its peer may still arrive on its empty barriers (the peer's
        // last releases). Every multicast into this CTA has landed already: our consumers
        // waited for every full phase. The .aligned barrier wants converged warps.
        __syncwarp();
        gg::cluster_sync();
    }
}

template <int BLOCK_N, bool PERSISTENT, Rows ROWS, GgPairing PAIR>
cudaError_t k3_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_kernel<BLOCK_N, PERSISTENT, ROWS, PAIR>;
    info->threads = THREADS;
    info->dynamic_smem = Ring<BLOCK_N>::SMEM_BYTES;
    info->cluster = cluster_size(PAIR);
    info->block_m = ROWS == Rows::fixed128 ? BLOCK_M : 0;  // 0: adaptive 128/64 rows
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = Ring<BLOCK_N>::STAGES;
    info->host_tiles = PERSISTENT ? 0 : 1;
    return cudaSuccess;
}

template <int BLOCK_N, bool PERSISTENT, Rows ROWS, GgPairing PAIR>
cudaError_t k3_launch(const GgLaunch *p) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!PERSISTENT && p->num_tiles <= 0) return cudaSuccess;
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    // A boxes: 64 rows x one 64-wide k slice (one consumer's half). B boxes: 64 k x 64 columns.
    static_assert(BLOCK_K == 64 && PANEL_N == 64, "gg_tmap_a/b build 64-wide boxes");
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;

    constexpr int CLUSTER = cluster_size(PAIR);
    const void *kernel = (const void *)k3_kernel<BLOCK_N, PERSISTENT, ROWS, PAIR>;
    const size_t smem = Ring<BLOCK_N>::SMEM_BYTES;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, smem));
    cudaLaunchAttribute cluster_dim = {};
    cluster_dim.id = cudaLaunchAttributeClusterDimension;
    cluster_dim.val.clusterDim = {CLUSTER, 1, 1};
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = p->stream;
    cfg.attrs = &cluster_dim;
    cfg.numAttrs = CLUSTER > 1 ? 1 : 0;
    int grid = p->num_tiles;
    if (PERSISTENT)  // one CTA per SM (one pair per two SMs of a GPC), no more than tiles
        CUDA_TRY(gg_launch_persistent_ctas(p, kernel, &cfg, CLUSTER, BLOCK_M, BLOCK_N, &grid));
    cfg.gridDim = dim3(grid);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_kernel<BLOCK_N, PERSISTENT, ROWS, PAIR>, tmap_a, tmap_b, p->c, p->row_offsets, p->tiles,
                                p->num_tiles, p->tokens, p->experts, p->k, p->n));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

extern "C" int k3_wgmma_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k < BLOCK_K || s->k % BLOCK_K != 0) {
        snprintf(why, len, "k3_wgmma needs k %% %d == 0 and k >= %d (k = %d)", BLOCK_K, BLOCK_K, s->k);
        return 0;
    }
    if (s->n <= 0 || s->n % 8 != 0) {
        snprintf(why, len, "k3_wgmma needs n %% 8 == 0 and n > 0 (n = %d)", s->n);
        return 0;
    }
    if (s->experts > MAX_EXPERTS) {
        snprintf(why, len, "k3_wgmma schedules at most %d experts on the device (experts = %d)",
                 MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

// One registered configuration: NAME_info / NAME_launch for one template instance.
#define K3_CONFIG(NAME, BLOCK_N, PERSISTENT, ROWS, PAIR)                                      \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                  \
        return k3_info<BLOCK_N, PERSISTENT, Rows::ROWS, PAIR>(info);             \
    }                                                                                         \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                 \
        return k3_launch<BLOCK_N, PERSISTENT, Rows::ROWS, PAIR>(p);              \
    }

K3_CONFIG(k3_wgmma_tile, 192, false, fixed128, GG_PAIR_NONE)    // one CTA per host-list tile, BM = 128
K3_CONFIG(k3_wgmma_persist, 192, true, fixed128, GG_PAIR_NONE)  // persistent, fixed BM = 128
K3_CONFIG(k3_wgmma_solo64, 192, true, solo64, GG_PAIR_NONE)     // + adaptive BM, 64-row tile on consumer 0
K3_CONFIG(k3_wgmma, 192, true, split64, GG_PAIR_NONE)           // + 64-row tile split by columns: main
K3_CONFIG(k3_wgmma_n128, 128, true, split64, GG_PAIR_NONE)      // main config, 128-wide column blocks
K3_CONFIG(k3_wgmma_n256, 256, true, split64, GG_PAIR_NONE)      // main config, 256-wide column blocks
K3_CONFIG(k3_wgmma_mc, 192, true, split64, GG_PAIR_ROWS)        // main + row-tile pairs multicasting B
K3_CONFIG(k3_wgmma_mc_n256, 256, true, split64, GG_PAIR_ROWS)   // _n256 + row-tile pairs multicasting B
K3_CONFIG(k3_wgmma_mca, 192, true, split64, GG_PAIR_COLS)       // main + column-block pairs multicasting A
