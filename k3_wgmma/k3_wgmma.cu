// k3_wgmma — stage 3 on Hopper: asynchronous warpgroup MMA from shared-memory descriptors,
// warp-specialized, persistent, adaptive BM, scheduled on the device (sm_90a).
//
// What changed since k2: the math moves from ldmatrix + mma.sync (per warp, operands through
// registers) to wgmma.mma_async (per warpgroup of 4 warps, A and B read by the tensor cores
// straight from the 128B-swizzled TMA boxes through 64-bit descriptors, common/gg_desc_sm90.h).
// A producer warpgroup feeds two consumer warpgroups; setmaxnreg moves registers to the
// consumers. The grid is persistent (one CTA per SM) and walks a tile list that every CTA
// derives from the device-side row offsets (common/gg_schedule.cuh): no host tile list, no
// host sync, so a CUDA graph can replay the launch with new m_e.
//
// Block tile   128 (or 64) x 192 x 64 (N = 2688 = 14 x 192). 128-row tile: consumer c computes
//              rows 64c..64c+63, 4 wgmma.m64n192k16 per stage. 64-row tile (an expert's
//              remainder of 1..64 rows, common/gg_adaptive.h): both consumers take all 64 rows,
//              split by columns at a 64-column panel (consumer 0 [0, 128), consumer 1
//              [128, 192)), each in a prefix of the same accumulator registers.
// Threads      384 = warpgroup 0 producer (thread 0 issues every TMA; setmaxnreg.dec 40) +
//              warpgroups 1, 2 consumers (setmaxnreg.inc 232): 128 x 40 + 256 x 232 = 64,512
//              of the 65,536 registers. __launch_bounds__(384, 1) lets setmaxnreg take effect.
// Shared mem   dynamic: as many stages of A 128 x 64 + B 64 x 192 (bf16, 40 KiB) as fit in
//              220 KiB beside 16 KiB of epilogue staging (2 KiB per consumer warp) and 1 KiB of
//              alignment slack: 5 stages, 222,208 B. Static: 2 x STAGES mbarriers + the
//              schedule (~2.1 KiB).
// Pipeline     full[s] (count 1: the producer's arrive.expect_tx, completed by TMA bytes),
//              empty[s] (count 8: lane 0 of every consumer warp); one ring position (GgPipe)
//              per role runs on across tiles. A consumer keeps one wgmma group in flight and
//              releases a stage when its group retires.
// Epilogue     per consumer warp, 16 rows x 64 columns at a time (common/gg_wgmma_store.cuh):
//              stmatrix into a swizzled 2 KiB buffer, then 16-byte row-masked global stores.
//              A TMA store of the box would write rows past the expert's end.
// Ablations    k3_wgmma_ablations.cu instantiates this kernel with other configurations
//              (Config below: tile width, host tile list, 64-row policy, CTA pairs).
// Tracing      TRACE = true builds the traced twin of a configuration (common/gg_trace.cuh):
//              per CTA a set-up event, per tile the producer's and each consumer's span.
// Preconditions  k % 64 == 0, k >= 64; n % 8 == 0; experts <= 256; A, B, C 16-byte aligned.
// Run it       build/bin/ggemm run --kernel k3_wgmma_split64 (this configuration), or
//              --kernel k3_wgmma: the entry point, k3_wgmma_entry.c, which picks a
//              configuration per problem (this one at 2048 rows; at 16k rows the ping-pong
//              kernel beside it, k3_wgmma_pingpong.cuh)
//              build/bin/ggemm trace --kernel k3_wgmma --skew 1.2 --out DIR
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
#include "gg_trace.cuh"
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

using Schedule = gg::TileSchedule<MAX_EXPERTS>;

template <int BLOCK_N>
struct Ring {
    static_assert(BLOCK_N % PANEL_N == 0, "a B stage is whole 64-column panels");
    static constexpr int PANELS = BLOCK_N / PANEL_N;
    static constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int STAGING_BYTES = CONSUMER_WARPS * STAGING_WARP_BYTES;
    static constexpr int STAGES = (SMEM_TARGET - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
    static constexpr int STAGING_OFFSET = STAGES * STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + STAGING_BYTES;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(STAGE_BYTES % SWIZZLE_ALIGN == 0, "stages must keep the 1024-byte alignment");
};

// A consumer warpgroup's walk over the ring. The ring position runs on across tiles.
template <int STAGES, int STAGE_BYTES, class PAIR>
struct ConsumerRing {
    uint64_t *full, *empty;
    uint32_t base;  // shared address of stage 0
    int rank;       // this CTA in its cluster (0 unpaired)
    bool leader;    // lane 0: arrives for its warp
    GgPipe pipe = {0, 0};

    __device__ __forceinline__ void wait_full() const {
        // lab:gap-begin consumer-wait
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
        // lab:gap-end
    }
    // Stage s may be overwritten.
    __device__ __forceinline__ void release(int s) const {
        // lab:gap-begin release
        if (leader) PAIR::release(&empty[s], rank);
        // lab:gap-end
    }
    // No work for this consumer: follow the ring without reading it.
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
            // lab:gap-begin descriptors
            const uint64_t desc_a = gg_wgmma_desc_a_kmajor_sw128(a_addr);
            const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(b_addr, PANEL_BYTES);
            // lab:gap-end
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

// ---- The configuration: what the ablations change, with this lesson's choice ----
// Tiles: where a CTA's tiles come from. Here: the device schedule, built by every CTA.
struct DeviceTiles {
    static constexpr bool HOST_LIST = false;
    __device__ static void build(Schedule &s, const int *row_offsets, int experts, int tokens,
                                 int n, int block_n, bool adaptive, GgPairing pairing) {
        s.build(row_offsets, experts, tokens, n, block_n, adaptive, pairing);
    }
    __device__ static int count(const Schedule &s, int) { return s.total(); }
    __device__ static gg::SchedTile at(const Schedule &s, const GgTile *, int t, int rank) {
        return s.at(t, rank);
    }
    // One CTA per SM, no more than there are tiles.
    static cudaError_t grid(const GgLaunch *p, const void *kernel, const cudaLaunchConfig_t *cfg,
                            int cluster, int block_n, int *ctas) {
        return gg_launch_persistent_ctas(p, kernel, cfg, cluster, BLOCK_M, block_n, ctas);
    }
};
// Pair: CTAs that share an operand. Here: none; every CTA loads its own A and B.
struct Unpaired {
    static constexpr int CLUSTER = 1;
    static constexpr GgPairing PAIRING = GG_PAIR_NONE;
    __device__ static int rank() { return 0; }
    __device__ static void start() { __syncthreads(); }  // barriers and schedule ready
    __device__ static void finish() {}
    __device__ static void load_a(void *box, const CUtensorMap *map, int k0, int row, uint64_t *bar,
                                  int, int) {
        gg::tma_load_2d(box, map, k0, row, bar);
    }
    __device__ static void load_b(void *box, const CUtensorMap *map, int col, int k0, int expert,
                                  uint64_t *bar, int, int) {
        gg::tma_load_3d(box, map, col, k0, expert, bar);
    }
    __device__ static void release(uint64_t *empty, int) { gg::mbarrier_arrive(empty); }
};
// Rows64: an expert's remainder of 1..64 rows. Here: a 64-row tile on both consumers, columns
// split at a panel (consumer 0 half rounded up to a panel): an N-major 128B-swizzled B operand
// must start on a panel, since inside a 128-byte row the next 64 columns are LBO away.
struct SplitColumns {
    static constexpr bool ADAPTIVE = true;
    __device__ static bool idle(const gg::SchedTile &, int) { return false; }
    template <int BLOCK_N, class RING, int ACC>
    __device__ static void tile64(RING &ring, float (&acc)[ACC], int c, uint8_t *staging,
                                  uint16_t *C, int n, int row, int rows, int col0, int lane,
                                  int k_blocks) {
        constexpr int N0 = (BLOCK_N / 2 + PANEL_N - 1) / PANEL_N * PANEL_N, N1 = BLOCK_N - N0;
        static_assert(N1 > 0, "both consumers need columns of a 64-row tile");
        if (c == 0) {
            ring.template mma_tile<N0>(acc, 0, 0, k_blocks);
            gg::wgmma_store_warp_rows<N0 / PANEL_N>(acc, staging, C, n, row, rows, col0, lane);
        } else {
            ring.template mma_tile<N1>(acc, 0, N0 / PANEL_N * PANEL_BYTES, k_blocks);
            gg::wgmma_store_warp_rows<N1 / PANEL_N>(acc, staging, C, n, row, rows, col0 + N0,
                                                    lane);
        }
    }
};
struct Lesson {
    static constexpr int BLOCK_N = 192;
    using Tiles = DeviceTiles;
    using Pair = Unpaired;
    using Rows64 = SplitColumns;
};

// tiles, num_host_tiles: the host tile list, read only by a HOST_LIST configuration.
template <class CFG, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
k3_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          uint16_t *__restrict__ C, const int *__restrict__ row_offsets,
          const GgTile *__restrict__ tiles, int num_host_tiles, int tokens, int experts, int k, int n,
          const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring<CFG::BLOCK_N>;
    using Tiles = typename CFG::Tiles;
    using Pair = typename CFG::Pair;
    using Trace = gg::Trace<TRACE>;
    constexpr int STAGES = R::STAGES;
    const uint64_t entry = Trace::now();

    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule sched;
    // TMA and wgmma swizzle on absolute shared addresses: start the ring on a 1024 B boundary.
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
    // A cluster takes entries cluster, cluster + clusters, ...; this CTA is its tile `rank`.
    const int rank = Pair::rank();
    const int cluster = blockIdx.x / Pair::CLUSTER, clusters = gridDim.x / Pair::CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], CONSUMER_WARPS * Pair::CLUSTER);
        }
        gg::fence_mbarrier_init();  // the TMA unit (async proxy) uses these barriers
    }
    Tiles::build(sched, row_offsets, experts, tokens, n, CFG::BLOCK_N, CFG::Rows64::ADAPTIVE,
                 Pair::PAIRING);
    Pair::start();
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = Tiles::count(sched, num_host_tiles);
    const int k_blocks = k / BLOCK_K;
    const int wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: one thread issues every TMA load ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = cluster; t < num_tiles; t += clusters) {
                const gg::SchedTile tile = Tiles::at(sched, tiles, t, rank);
                Trace span;
                // A boxes wholly past `tokens` and B panels wholly past n are not loaded: their
                // stale shared memory only feeds rows / columns that are never stored (row i
                // of C reads only row i of A, column j only column j of B). Boxes that hang
                // over the edge are zero-filled by TMA and count in full.
                const int a_boxes = tile.height / WG_ROWS;
                int a_loads = 0, b_loads = 0;
                for (int h = 0; h < a_boxes; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
                for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
                const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    // lab:gap-begin producer-wait
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    // lab:gap-end
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES;
                    uint8_t *b_box = a_box + A_BYTES;
                    // lab:gap-begin expect-tx
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    // lab:gap-end
                    // Rows from row0 up to the box height, whatever tile.rows is: rows of the
                    // next expert, or zeros past `tokens`. Computed, never stored (epilogue).
                    for (int h = 0; h < a_loads; ++h)
                        Pair::load_a(a_box + h * HALF_A_BYTES, &tmap_a, kb * BLOCK_K,
                                     tile.row0 + h * WG_ROWS, &full[stage], h, rank);
                    for (int p = 0; p < b_loads; ++p)
                        Pair::load_b(b_box + p * PANEL_BYTES, &tmap_b, tile.col0 + p * PANEL_N,
                                     kb * BLOCK_K, tile.expert, &full[stage], p, rank);
                    if (kb == 0) span.mark();  // the tile's first TMA issued
                }
                span.end(trace, GG_TRACE_PRODUCER, t, tile.expert, tile.row0, tile.rows, tile.col0,
                         tile.height > 0 && tile.col0 < n);
            }
        }
    } else {
        // ---------------- consumers ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;
        const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        const int warp_row = warp * STAGING_ROWS;  // the warp's rows in its 64-row accumulator
        uint8_t *staging = smem + R::STAGING_OFFSET + (c * 4 + warp) * STAGING_WARP_BYTES;
        ConsumerRing<STAGES, R::STAGE_BYTES, Pair> ring{full, empty, gg::smem_u32(smem), rank,
                                                        lane == 0};
        float acc[CFG::BLOCK_N / 2];
        for (int t = cluster; t < num_tiles; t += clusters) {
            const gg::SchedTile tile = Tiles::at(sched, tiles, t, rank);
            Trace span;
            if constexpr (TRACE) {  // traced only: time the wait for the tile's first stage alone
                ring.wait_full();
                span.mark();
            }
            // On a 64-row tile every consumer's warp w holds rows 16w .. 16w + 15 of the tile.
            const int row64 = tile.row0 + warp_row, rows64 = tile.rows - warp_row;
            const bool left_out = CFG::Rows64::idle(tile, c);  // never, in this configuration
            const bool idle = tile.height == 0 || tile.col0 >= n || left_out;
            if (idle) {
                // Nothing to compute here: the idle half of a pair entry (no rows or no
                // columns), or a Rows64 choice that leaves this consumer out. Follow the ring.
                ring.skip_tile(k_blocks);
            } else if (tile.height == BLOCK_M) {  // consumer c: rows 64c .. 64c + 63, all columns
                ring.template mma_tile<CFG::BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks);
                const int row = c * WG_ROWS + warp_row;
                gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + row,
                                                     tile.rows - row, tile.col0, lane);
            } else {  // 64 rows
                CFG::Rows64::template tile64<CFG::BLOCK_N>(ring, acc, c, staging, C, n, row64,
                                                           rows64, tile.col0, lane, k_blocks);
            }
            if (threadIdx.x % WG_THREADS == 0)  // warp 0 speaks for its warpgroup
                span.end(trace, GG_TRACE_CONSUMER + c, t, tile.expert, tile.row0, tile.rows, tile.col0,
                         !idle);
        }
    }
    Pair::finish();
}

template <class CFG>
cudaError_t k3_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_kernel<CFG, false>;
    info->threads = THREADS;
    info->dynamic_smem = Ring<CFG::BLOCK_N>::SMEM_BYTES;
    info->cluster = CFG::Pair::CLUSTER;
    info->block_m = CFG::Rows64::ADAPTIVE ? 0 : BLOCK_M;  // 0: adaptive 128/64 rows
    info->block_n = CFG::BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = Ring<CFG::BLOCK_N>::STAGES;
    info->host_tiles = CFG::Tiles::HOST_LIST ? 1 : 0;
    return cudaSuccess;
}

template <class CFG, bool TRACE>
cudaError_t k3_launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    // A boxes: 64 rows x one 64-wide k slice (one consumer's half). B boxes: 64 k x 64 columns.
    static_assert(BLOCK_K == 64 && PANEL_N == 64, "gg_tmap_a/b build 64-wide boxes");
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;

    constexpr int CLUSTER = CFG::Pair::CLUSTER;
    const void *kernel = (const void *)k3_kernel<CFG, TRACE>;
    const size_t smem = Ring<CFG::BLOCK_N>::SMEM_BYTES;
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
    int grid;
    CUDA_TRY(CFG::Tiles::grid(p, kernel, &cfg, CLUSTER, CFG::BLOCK_N, &grid));
    cfg.gridDim = dim3(grid);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_kernel<CFG, TRACE>, tmap_a, tmap_b, p->c, p->row_offsets,
                                p->tiles, p->num_tiles, p->tokens, p->experts, p->k, p->n, trace));
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

// One registered configuration: NAME_launch / NAME_info for the kernel instance of CFG, and
// NAME_trace_launch for its traced twin.
#define K3_CONFIG(NAME, CFG)                                                                   \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                  \
        return k3_launch<CFG, false>(p, {});                                                   \
    }                                                                                          \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {    \
        return k3_launch<CFG, true>(p, *t);                                                    \
    }                                                                                          \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) { return k3_info<CFG>(info); }

// lab:configs
K3_CONFIG(k3_wgmma_split64, Lesson)
