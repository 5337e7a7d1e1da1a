// k2_tma_ws — stage 2: TMA loads, an mbarrier ring, and a producer warp (sm_90a).
//
// What changed since k1: the compute warps no longer copy. A ninth warp (one lane) issues
// cp.async.bulk.tensor (TMA) loads into a ring of STAGES shared-memory stages; full/empty
// mbarriers replace the two block barriers per slice. BLOCK_K grows from 32 to 64 so one
// row of a slice is 128 bytes, one row of the 128-byte swizzle, which replaces k1's row pad
// (common/gg_swizzle.h). The math (ldmatrix + mma.sync m16n8k16) and the register-direct
// epilogue are k1's; the schedule is still the host tile list, one block per tile.
//
// Block tile   BLOCK_M x 128, BLOCK_K = 64 (four k16 steps per stage).
// Threads      288 = 8 consumer warps as a 2 x 4 grid of WARP_M x 32 warp tiles
//              (WARP_M = BLOCK_M / 2: 64 or 32) + warp 8, the producer (lane 0 works).
// Shared mem   dynamic, per stage: A box BLOCK_M x 64 and two B boxes 64 k x 64 cols,
//              bf16, each 128B-swizzled and 1024-byte aligned: 32 KiB (BM 128), 24 KiB
//              (BM 64). Total = 1 KiB alignment slack + STAGES stages + 2 STAGES mbarriers:
//              s2 66,592 B, s3 99,376 B, bm64 (4 stages) 99,392 B.
// Occupancy    s2, s3 and bm64 ask for 2 blocks per SM (__launch_bounds__ min blocks), which
//              caps registers at 112 per thread (ptxas -v reports what each one uses);
//              s3_1blk leaves registers uncapped, as the worklog's S=3 did: one block per SM.
// Pipeline     full[s] (count 1: the producer's arrive.expect_tx; the TMA bytes complete
//              it) and empty[s] (count 8: lane 0 of every consumer warp). Each role keeps a
//              ring position (stage, phase) and advances it once per slice (GgPipe,
//              common/gg_pipeline.h): consumers wait full with `phase`, the producer waits
//              empty with `phase ^ 1`, which the first pass over the ring finds complete.
// Tensor maps  A: 2D {k, tokens}, box {64, BLOCK_M}. B: 3D {n, k, experts}, box {64, 64, 1},
//              one box per 64-column panel (a panel wholly past n is skipped and left out
//              of the stage's byte count). Built on the host per launch (gg_tmap_a, gg_tmap_b)
//              and passed as __grid_constant__ parameters.
// Preconditions  k % 64 == 0, k >= 64 (whole stages); n % 8 == 0 (TMA: 16-byte row stride).
//              A box rows past tile.rows are the next expert's rows, or zeros past
//              `tokens`; B columns >= n are zeros. Both are computed, never stored.
// Tracing      TRACE = true builds the traced twin of a configuration (common/gg_trace.cuh):
//              per CTA a set-up event, per tile the producer's and the consumers' spans.
// Run it       build/bin/ggemm run --kernel k2_tma_ws_s2   (also _s3, _s3_1blk, _bm64)
//              build/bin/ggemm trace --kernel k2_tma_ws_s3 --skew 1.2 --out DIR
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>

#include "gg_check.h"
#include "gg_fragments.h"
#include "gg_kernel.h"
#include "gg_launch.h"
#include "gg_mma_sync_store.cuh"
#include "gg_pipeline.h"
#include "gg_swizzle.h"
#include "gg_tma.h"
#include "gg_trace.cuh"
#include "k2_tma_ws.h"
#include "ptx/ptx_ampere.cuh"
#include "ptx/ptx_tma.cuh"

namespace {

constexpr int BLOCK_N = 128, BLOCK_K = 64;
constexpr int CONSUMER_WARPS = 8, PRODUCER_WARP = CONSUMER_WARPS;
constexpr int THREADS = (CONSUMER_WARPS + 1) * 32;
constexpr int WARPS_M = 2, WARPS_N = 4, WARP_N = BLOCK_N / WARPS_N;
constexpr int PANEL_N = 64;                          // B columns per TMA box: one 128-byte row
constexpr int PANELS = BLOCK_N / PANEL_N;
constexpr int ROW_BYTES = BLOCK_K * 2;               // one A row / one B k-row of a slice
constexpr int PANEL_BYTES = BLOCK_K * PANEL_N * 2;   // one B box
constexpr int SWIZZLE_ALIGN = 1024;                  // 8 rows x 128 B: the swizzle atom
static_assert(ROW_BYTES == GG_SWIZZLE128_ROW_BYTES, "a slice row must be one swizzle row");
static_assert(PANEL_N * 2 == GG_SWIZZLE128_ROW_BYTES, "a B box row must be one swizzle row");
static_assert(WARPS_M * WARPS_N == CONSUMER_WARPS, "the warp grid must hold the 8 consumer warps");
static_assert(PANEL_N % WARP_N == 0, "a warp's columns must lie inside one B panel");

// Shared-memory layout of one configuration: [slack][stage 0 .. STAGES-1][full[], empty[]],
// each stage = A box then the PANELS B boxes, every box starting on a 1024-byte boundary.
template <int BLOCK_M, int STAGES>
struct Ring {
    static constexpr int A_BYTES = BLOCK_M * ROW_BYTES;
    static constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int BARRIER_OFFSET = STAGES * STAGE_BYTES;
    // The dynamic-smem base is only guaranteed 16-byte aligned: reserve a full atom of slack.
    static constexpr size_t SMEM_BYTES =
        SWIZZLE_ALIGN + BARRIER_OFFSET + 2 * STAGES * sizeof(uint64_t);
    static_assert(A_BYTES % SWIZZLE_ALIGN == 0 && STAGE_BYTES % SWIZZLE_ALIGN == 0,
                  "every TMA box must start on a 1024-byte swizzle atom");
};

template <int BLOCK_M, int STAGES, int MIN_BLOCKS, bool TRACE>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
k2_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          uint16_t *__restrict__ C, const GgTile *__restrict__ tiles, int k, int n,
          const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring<BLOCK_M, STAGES>;
    using Trace = gg::Trace<TRACE>;
    const uint64_t entry = Trace::now();
    constexpr int WARP_M = BLOCK_M / WARPS_M;
    constexpr int FRAG_M = WARP_M / 16;  // m16 A fragments per warp
    constexpr int FRAG_N = WARP_N / 8;   // n8 B fragments per warp
    constexpr int K_STEPS = BLOCK_K / 16;
    static_assert(WARP_M % 16 == 0, "a warp tile is a whole number of m16 fragments");
    static_assert(FRAG_N % 2 == 0, "B fragments are loaded 16 columns (two n8) per ldmatrix.x4");

    extern __shared__ uint8_t smem_raw[];
    // TMA swizzles on absolute shared addresses: move the ring to the next 1024-byte boundary.
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + R::BARRIER_OFFSET);
    uint64_t *empty = full + STAGES;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], CONSUMER_WARPS);
        }
        gg::fence_mbarrier_init();  // the TMA unit (async proxy) completes on these barriers
    }
    __syncthreads();  // the only block barrier: no warp touches a barrier before it is initialised
    if (threadIdx.x == 0) Trace::setup(trace, entry);

    const GgTile tile = tiles[blockIdx.x];
    const int k_slices = k / BLOCK_K;

    if (warp == PRODUCER_WARP) {
        if (lane != 0) return;
        // Panels wholly right of column n are not loaded. Their stale shared memory only
        // feeds accumulator columns >= n, which are never stored (column j of C reads
        // only column j of B), and the stage's byte count leaves them out.
        const int panels = min(PANELS, (n - tile.col0 + PANEL_N - 1) / PANEL_N);
        const uint32_t stage_tx = R::A_BYTES + panels * PANEL_BYTES;
        Trace span;
        GgPipe pipe = {0, 0};
        for (int kt = 0; kt < k_slices; ++kt, gg_pipe_advance(&pipe, STAGES)) {
            const int stage = pipe.stage;
            // lab:gap-begin producer-wait
            gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
            // lab:gap-end
            uint8_t *a_box = smem + stage * R::STAGE_BYTES;
            // lab:gap-begin expect-tx
            gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
            // lab:gap-end
            // The A box is BLOCK_M rows from row0, whatever tile.rows is: rows of the next
            // expert, or zeros past `tokens`. Loaded and multiplied, never stored (epilogue).
            gg::tma_load_2d(a_box, &tmap_a, kt * BLOCK_K, tile.row0, &full[stage]);
            for (int p = 0; p < panels; ++p)
                gg::tma_load_3d(a_box + R::A_BYTES + p * PANEL_BYTES, &tmap_b,
                                tile.col0 + p * PANEL_N, kt * BLOCK_K, tile.expert, &full[stage]);
            if (kt == 0) span.mark();  // the tile's first TMA issued
        }
        span.end(trace, GG_TRACE_PRODUCER, blockIdx.x, tile.expert, tile.row0, tile.rows, tile.col0,
                 true);
        return;  // no block barrier follows, so the producer may leave early
    }

    const int warp_row = (warp / WARPS_N) * WARP_M;   // warp tile origin inside the block tile
    const int warp_col = (warp % WARPS_N) * WARP_N;
    const int panel = warp_col / PANEL_N;             // the B box holding this warp's columns
    const int panel_chunk = (warp_col % PANEL_N) / 8; // first 16-byte chunk of them in a B row

    // ldmatrix.x4 addresses (gg_fragments.h): lane L gives row L % 16 and chunk L / 16 of a
    // 16 x 16 block. A: rows of the m16 fragment x k chunks of the k16 step -> a0..a3.
    // B (.trans, a box is k rows x 64 columns): k rows x two column chunks -> b0,b1 of two n8
    // fragments. Both read 8 consecutive rows at one logical chunk per phase: the swizzle
    // spreads them over the 8 bank groups.

    float acc[FRAG_M][FRAG_N][4] = {};
    GgPipe pipe = {0, 0};
    Trace span;
    if constexpr (TRACE) {  // traced only: time the wait for the first stage on its own
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
        span.mark();
    }
    for (int kt = 0; kt < k_slices; ++kt, gg_pipe_advance(&pipe, STAGES)) {
        const int stage = pipe.stage;
        // lab:gap-begin consumer-wait
        gg::mbarrier_wait_parity(&full[stage], gg_pipe_full_parity(pipe));
        // lab:gap-end
        const uint8_t *a_box = smem + stage * R::STAGE_BYTES;
        const uint8_t *b_box = a_box + R::A_BYTES + panel * PANEL_BYTES;
#pragma unroll
        for (int ks = 0; ks < K_STEPS; ++ks) {
            uint32_t a_frag[FRAG_M][4];
            uint32_t b_frag[FRAG_N / 2][4];  // [j]: regs {0,1} cols 16j..+7, {2,3} cols 16j+8..+15
#pragma unroll
            for (int fm = 0; fm < FRAG_M; ++fm)
                gg::ldmatrix_x4(a_frag[fm], a_box + gg_swizzle128(gg_ldsm_x4_row(warp_row + fm * 16, lane),
                                                                  gg_ldsm_x4_chunk(ks * 2, lane)));
#pragma unroll
            for (int j = 0; j < FRAG_N / 2; ++j)
                gg::ldmatrix_x4_trans(b_frag[j],
                                      b_box + gg_swizzle128(gg_ldsm_x4_row(ks * 16, lane),
                                                            gg_ldsm_x4_chunk(panel_chunk + j * 2, lane)));
#pragma unroll
            for (int fm = 0; fm < FRAG_M; ++fm)
#pragma unroll
                for (int fn = 0; fn < FRAG_N; ++fn)
                    gg::mma_bf16_16816(acc[fm][fn], a_frag[fm], &b_frag[fn / 2][(fn % 2) * 2]);
        }
        // lab:gap-begin release
        gg::fence_proxy_async_smem();  // generic-proxy ldmatrix reads complete before a TMA refill
        __syncwarp();  // every lane has fenced its reads of this stage ...
        if (lane == 0) gg::mbarrier_arrive(&empty[stage]);  // ... before the stage is released
        // lab:gap-end
    }

    gg::store_mma_sync_tile(acc, C, n, tile, warp_row, warp_col, lane);  // gg_mma_sync_store.cuh
    if (warp == 0 && lane == 0)  // warp 0 speaks for the 8: they wait on the same barriers
        span.end(trace, GG_TRACE_CONSUMER, blockIdx.x, tile.expert, tile.row0, tile.rows, tile.col0,
                 true);
}

template <int BLOCK_M, int STAGES, int MIN_BLOCKS>
cudaError_t k2_info(GgKernelInfo *info) {
    info->kernel = (const void *)k2_kernel<BLOCK_M, STAGES, MIN_BLOCKS, false>;
    info->threads = THREADS;
    info->dynamic_smem = Ring<BLOCK_M, STAGES>::SMEM_BYTES;
    info->cluster = 1;
    info->block_m = BLOCK_M;
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = STAGES;
    info->host_tiles = 1;
    return cudaSuccess;
}

template <int BLOCK_M, int STAGES, int MIN_BLOCKS, bool TRACE>
cudaError_t k2_launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->num_tiles == 0) return cudaSuccess;  // also covers tokens == 0 (no valid tensor map)
    // A boxes: BLOCK_M rows x one 64-wide k slice. B boxes: 64 k rows x 64 columns, one per
    // panel; a box may be wider than n (n = 8): the missing columns read as zeros and still
    // count as bytes.
    static_assert(BLOCK_K == 64 && PANEL_N == 64, "gg_tmap_a/b build 64-wide boxes");
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, BLOCK_M) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;

    const size_t smem = Ring<BLOCK_M, STAGES>::SMEM_BYTES;
    CUDA_TRY(gg_launch_smem_opt_in((const void *)k2_kernel<BLOCK_M, STAGES, MIN_BLOCKS, TRACE>, smem));
    k2_kernel<BLOCK_M, STAGES, MIN_BLOCKS, TRACE><<<p->num_tiles, THREADS, smem, p->stream>>>(
        tmap_a, tmap_b, p->c, p->tiles, p->k, p->n, trace);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

extern "C" int k2_tma_ws_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k < BLOCK_K || s->k % BLOCK_K != 0 || s->n % 8 != 0) {
        snprintf(why, len, "k2_tma_ws needs k %% %d == 0, k >= %d and n %% 8 == 0 (k = %d, n = %d)",
                 BLOCK_K, BLOCK_K, s->k, s->n);
        return 0;
    }
    return 1;
}

// One registered configuration: NAME_launch / NAME_info for one template instance, and
// NAME_trace_launch for its traced twin.
// MIN_BLOCKS caps registers so that many blocks fit one SM's 64 Ki registers (README).
#define K2_CONFIG(NAME, BLOCK_M, STAGES, MIN_BLOCKS)                                          \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                 \
        return k2_launch<BLOCK_M, STAGES, MIN_BLOCKS, false>(p, {});                          \
    }                                                                                         \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {   \
        return k2_launch<BLOCK_M, STAGES, MIN_BLOCKS, true>(p, *t);                           \
    }                                                                                         \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                  \
        return k2_info<BLOCK_M, STAGES, MIN_BLOCKS>(info);                                    \
    }

// lab:configs
K2_CONFIG(k2_tma_ws_s2, 128, 2, 2)
K2_CONFIG(k2_tma_ws_s3, 128, 3, 2)
K2_CONFIG(k2_tma_ws_s3_1blk, 128, 3, 1)  // no register cap: the worklog's one-block S=3
K2_CONFIG(k2_tma_ws_bm64, 64, 4, 2)
