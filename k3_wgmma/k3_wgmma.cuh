// k3_wgmma.cuh — the pieces every k3 step shares, each written once: the tile constants, the
// shared-memory ring, the producer's stage fill, the consumer main loop (also k4's fused GEMM1)
// and the launch. The four lesson steps (step1_tile.cu .. step4_pingpong.cu) differ only in how
// they hand tiles to CTAs and to consumer warpgroups; read step 1 first, then come back here.
//
// Ring       STAGES stages of A (BLOCK_M x 64 k) + B (64 k x BLOCK_N), bf16, each a set of TMA
//            boxes in the 128B-swizzled layout wgmma reads through descriptors
//            (common/gg_desc_sm90.h): A as two 64-row boxes, B as BLOCK_N / 64 panels of 64
//            columns. As many stages as fit in SMEM_TARGET beside the epilogue's staging.
// Barriers   full[s]: the producer's arrive.expect_tx, completed by the TMA bytes. empty[s]: one
//            arrival per consumer warp that read stage s, lane 0 speaking for its warp (each
//            kernel's init_ring call gives the count: 8 shared, 4 ping-pong). Every role
//            keeps its own ring position (GgPipe, common/gg_pipeline.h) and advances once per
//            k-block, so the roles agree on the position without talking.
// Main loop  one wgmma group in flight: a stage is released when the group after it has been
//            issued and its own group has retired (wgmma.wait_group 1).
#pragma once
#include <cuda.h>
#include <stdint.h>

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
#include "k3_wgmma/k3_wgmma.h"
#include "ptx/ptx_ampere.cuh"
#include "ptx/ptx_tma.cuh"
#include "ptx/ptx_wgmma.cuh"

namespace k3 {

// ---- Tiles and warpgroups ----
constexpr int BLOCK_M = 128, BLOCK_K = K3_BLOCK_K, WG_ROWS = 64;  // WG_ROWS: one m64 wgmma
constexpr int WARPS_PER_WG = 4, WG_THREADS = WARPS_PER_WG * 32;
constexpr int CONSUMERS = 2, CONSUMER_WARPS = CONSUMERS * WARPS_PER_WG;
constexpr int THREADS = (1 + CONSUMERS) * WG_THREADS;  // warpgroup 0 produces
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;  // setmaxnreg budgets
constexpr int MAX_EXPERTS = K3_MAX_EXPERTS;  // the schedule's table: 256 groups of <= 16 experts
static_assert(MAX_EXPERTS <= GG_SCHED_MAX_EXPERTS, "more experts than the schedule's index covers");
// k-blocks over K: the last one may hang past K (K % 8 == 0 is all TMA needs: 16-byte row
// strides). TMA zero-fills the columns of A past K and the rows of B_e past K (B's map is 3-D,
// so the box stops at its own expert's edge, not in the next expert), so the tail adds zeros.
__host__ __device__ constexpr int k_blocks_of(int k) { return (k + BLOCK_K - 1) / BLOCK_K; }
static_assert(CONSUMER_REGS * CONSUMERS * WG_THREADS + PRODUCER_REGS * WG_THREADS <= 65536,
              "setmaxnreg budget exceeds the register file");

// ---- Shared memory ----
constexpr int PANEL_N = 64;                        // B columns per TMA box: one 128 B row
constexpr int ROW_BYTES = BLOCK_K * 2;             // one A row / one B k-row of a stage
constexpr int HALF_A_BYTES = WG_ROWS * ROW_BYTES;  // one A box: 64 rows
constexpr int A_BYTES = BLOCK_M * ROW_BYTES;
constexpr int PANEL_BYTES = BLOCK_K * PANEL_N * 2;  // one B box: 64 k x 64 columns
constexpr int STAGING_ROWS = gg::WGMMA_STORE_ROWS;  // a warp's rows of an m64 accumulator
constexpr int STAGING_WARP_BYTES = gg::WGMMA_STORE_STAGING_BYTES;
constexpr int SWIZZLE_ALIGN = 1024;                // a 128B swizzle atom: 8 rows of 128 B
constexpr int SMEM_TARGET = 220 * 1024;            // ring + staging + slack, of 227 KiB
static_assert(ROW_BYTES == GG_SWIZZLE128_ROW_BYTES && PANEL_N * 2 == GG_SWIZZLE128_ROW_BYTES,
              "a stage row must be one 128-byte swizzle row");
static_assert(PANEL_N == gg::WGMMA_STORE_PANEL_N, "the epilogue stores whole B panels");
static_assert(HALF_A_BYTES % SWIZZLE_ALIGN == 0 && PANEL_BYTES % SWIZZLE_ALIGN == 0,
              "every TMA box and wgmma operand must start on a 1024-byte swizzle atom");

// One 64-column staging buffer per consumer warp: the epilogue reuses it panel by panel.
template <int BLOCK_N>
struct Ring {
    static_assert(BLOCK_N % PANEL_N == 0, "a B stage is whole 64-column panels");
    static constexpr int PANELS = BLOCK_N / PANEL_N;
    static constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int STAGING_WARP = STAGING_WARP_BYTES;
    static constexpr int STAGING_BYTES = CONSUMER_WARPS * STAGING_WARP;
    static constexpr int STAGES = (SMEM_TARGET - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
    static constexpr int STAGING_OFFSET = STAGES * STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + STAGING_BYTES;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(STAGE_BYTES % SWIZZLE_ALIGN == 0, "stages must keep the 1024-byte alignment");
};

// TMA and wgmma swizzle on absolute shared addresses: the ring starts on a 1024 B boundary
// (the 1 KiB of slack in SMEM_BYTES).
__device__ __forceinline__ uint8_t *ring_start(uint8_t *smem_raw) {
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    return smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
}

// Consumer warp `warp` of warpgroup c: its own epilogue staging buffer.
template <int BLOCK_N>
__device__ __forceinline__ uint8_t *staging_of(uint8_t *smem, int c, int warp) {
    using R = Ring<BLOCK_N>;
    return smem + R::STAGING_OFFSET + (c * WARPS_PER_WG + warp) * R::STAGING_WARP;
}

// Thread 0: full[s] counts `full_arrivals`, empty[s] `empty_arrivals`. The caller syncs.
template <int STAGES>
__device__ __forceinline__ void init_ring(uint64_t (&full)[STAGES], uint64_t (&empty)[STAGES],
                                          int full_arrivals, int empty_arrivals) {
    if (threadIdx.x != 0) return;
    for (int s = 0; s < STAGES; ++s) {
        gg::mbarrier_init(&full[s], full_arrivals);
        gg::mbarrier_init(&empty[s], empty_arrivals);
    }
    gg::fence_mbarrier_init();  // the TMA unit (async proxy) uses these barriers
}

// ---- Producer ----
// How the consumers read a stage's B boxes. The forward's B_e [k x n] has n contiguous: a box is
// 64 k-rows of 64 columns, N-major, read with imm-trans-b 1 through the descriptor the main loop
// builds. k5's dgrad reads B_e^T from the same boxes K-major (k5_backward.cuh) and overrides
// these three.
struct NMajorB {
    static constexpr int TRANS_B = 1;
    static constexpr uint32_t B_K16 = GG_WGMMA_MNMAJOR_K16_BYTES;  // the next 16 k-rows
    __device__ static uint64_t b_operand(uint64_t desc_b, uint32_t /*b_addr*/) { return desc_b; }
};

// Where a stage's boxes come from. Here each CTA loads its own A and B; a CTA pair that
// multicasts a shared operand (k3_wgmma_ablations.cu) brings its own.
struct OwnLoads : NMajorB {
    static constexpr int CLUSTER = 1;
    __device__ static void load_a(void *box, const CUtensorMap *map, int k0, int row, uint64_t *bar,
                                  int /*h*/, int /*rank*/) {
        gg::tma_load_2d(box, map, k0, row, bar);
    }
    __device__ static void load_b(void *box, const CUtensorMap *map, int col, int k0, int expert,
                                  uint64_t *bar, int /*panel*/, int /*rank*/) {
        gg::tma_load_3d(box, map, col, k0, expert, bar);
    }
    __device__ static void release(uint64_t *empty) { gg::mbarrier_arrive(empty); }
};

// One thread fills the ring with a tile's k-blocks. A boxes wholly past `tokens` and B panels
// wholly past n are not loaded: their stale shared memory only feeds rows / columns that are
// never stored (row i of C reads only row i of A, column j only column j of B). Boxes that hang
// over the edge are zero-filled by TMA and count in full. The span is marked when the tile's
// first loads are issued. k-blocks kb0 .. k_blocks - 1: all of them, or one piece of a tile split
// along the reduction (k5_dgrad_tail.cu).
template <int BLOCK_N, class LOADS = OwnLoads, class SPAN>
__device__ __forceinline__ void produce_tile(GgPipe &pipe, const gg::SchedTile &tile, int k_blocks,
                                             const CUtensorMap *tmap_a, const CUtensorMap *tmap_b,
                                             uint8_t *smem, uint64_t *full, uint64_t *empty,
                                             int tokens, int n, int rank, SPAN &span, int kb0 = 0) {
    using R = Ring<BLOCK_N>;
    int a_loads = 0, b_loads = 0;
    for (int h = 0; h < tile.height / WG_ROWS; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
    for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
    const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
    for (int kb = kb0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, R::STAGES)) {
        const int stage = pipe.stage;
        // lab:gap-begin producer-wait
        gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
        // lab:gap-end
        uint8_t *a_box = smem + stage * R::STAGE_BYTES, *b_box = a_box + A_BYTES;
        // lab:gap-begin expect-tx
        gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
        // lab:gap-end
        // Rows from row0 up to the box height, whatever tile.rows is: rows of the next expert,
        // or zeros past `tokens`. Computed, never stored (the epilogue masks them).
        for (int h = 0; h < a_loads; ++h)
            LOADS::load_a(a_box + h * HALF_A_BYTES, tmap_a, kb * BLOCK_K, tile.row0 + h * WG_ROWS,
                          &full[stage], h, rank);
        for (int p = 0; p < b_loads; ++p)
            LOADS::load_b(b_box + p * PANEL_BYTES, tmap_b, tile.col0 + p * PANEL_N, kb * BLOCK_K,
                          tile.expert, &full[stage], p, rank);
        if (kb == kb0) span.mark();
    }
}

// ---- Consumer: the main loop ----
// One tile's K loop for a consumer warpgroup: HALVES (1 or 2) m64 x N accumulators, acc0 and
// (HALVES 2) acc1, each in registers [0, N / 2); A of half h from a_off + h x 64 rows and B from
// b_off (a panel boundary) inside every stage. One wgmma group stays in flight: a stage is
// released (by `leader`, lane 0 of each warp, through LOADS) once the next group is issued and
// its own has retired. PROXY_FENCE: the stage was written by ordinary (generic-proxy) stores,
// as k4's cp.async gather writes A, which wgmma (async proxy) may read only after a proxy
// fence. The span is marked when the first stage is full. (A free function with two named
// accumulators: written as a member over one indexed array, ptxas issued the wgmma later.)
template <int N, int HALVES, int STAGES, int STAGE_BYTES, class LOADS, bool PROXY_FENCE, int ACC, class SPAN>
__device__ __forceinline__ void mma_k_loop(float (&acc0)[ACC], float (&acc1)[ACC], uint64_t *full,
                                           uint64_t *empty, uint32_t base, GgPipe &pipe, uint32_t a_off,
                                           uint32_t b_off, int k_blocks, bool leader, SPAN &span) {
    static_assert(HALVES == 1 || HALVES == 2, "one accumulator per 64-row half");
    int prev_stage = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
        // lab:gap-begin consumer-wait
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
        // lab:gap-end
        if (kb == 0) span.mark();
        if constexpr (PROXY_FENCE) gg::fence_proxy_async_smem();
        const uint32_t stage_addr = base + pipe.stage * STAGE_BYTES;
        const uint32_t a_addr = stage_addr + a_off, b_addr = stage_addr + A_BYTES + b_off;
        // lab:gap-begin descriptors
        const uint64_t desc_a0 = gg_wgmma_desc_a_kmajor_sw128(a_addr);
        const uint64_t desc_a1 = gg_wgmma_desc_a_kmajor_sw128(a_addr + HALF_A_BYTES);
        const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(b_addr, PANEL_BYTES);
        // lab:gap-end
        const uint64_t desc_b_read = LOADS::b_operand(desc_b, b_addr);  // dgrad's B: K-major
        gg::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
            const uint64_t b = gg_wgmma_desc_advance(desc_b_read, kk * LOADS::B_K16);
            const int scale = (kb > 0 || kk > 0) ? 1 : 0;  // the tile's first k16 overwrites
            gg::wgmma_m64k16_bf16<N, 0, LOADS::TRANS_B>(
                acc0, gg_wgmma_desc_advance(desc_a0, kk * GG_WGMMA_KMAJOR_K16_BYTES), b, scale);
            if constexpr (HALVES == 2)
                gg::wgmma_m64k16_bf16<N, 0, LOADS::TRANS_B>(
                    acc1, gg_wgmma_desc_advance(desc_a1, kk * GG_WGMMA_KMAJOR_K16_BYTES), b, scale);
        }
        gg::wgmma_commit_group();
        gg::wgmma_wait_group<1>();  // the previous stage's group has read its operands
        // lab:gap-begin release
        if (kb > 0 && leader) LOADS::release(&empty[prev_stage]);
        // lab:gap-end
        prev_stage = pipe.stage;
        gg_pipe_advance(&pipe, STAGES);
    }
    gg::wgmma_wait_group<0>();
    if (leader) LOADS::release(&empty[prev_stage]);
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
        gg::wgmma_fence_operand(acc0[i]);
        if constexpr (HALVES == 2) gg::wgmma_fence_operand(acc1[i]);
    }
}

// A consumer warpgroup's place in the ring, which runs on across tiles, and its walks.
template <int STAGES, int STAGE_BYTES, class LOADS = OwnLoads, bool PROXY_FENCE = false>
struct ConsumerRing {
    uint64_t *full, *empty;
    uint32_t base;  // shared address of stage 0
    bool leader;    // lane 0: arrives for its warp
    GgPipe pipe = {0, 0};

    // The main loop into two 64-row accumulators (HALVES 2) or acc0 alone.
    template <int N, int HALVES, int ACC, class SPAN>
    __device__ __forceinline__ void mma(float (&acc0)[ACC], float (&acc1)[ACC], uint32_t a_off,
                                        uint32_t b_off, int k_blocks, SPAN &span) {
        mma_k_loop<N, HALVES, STAGES, STAGE_BYTES, LOADS, PROXY_FENCE>(acc0, acc1, full, empty, base, pipe,
                                                                        a_off, b_off, k_blocks, leader, span);
    }
    // One 64-row accumulator.
    template <int N, int ACC, class SPAN>
    __device__ __forceinline__ void mma(float (&acc)[ACC], uint32_t a_off, uint32_t b_off, int k_blocks,
                                        SPAN &span) {
        mma<N, 1>(acc, acc, a_off, b_off, k_blocks, span);
    }
    // Another warpgroup's tile (ping-pong): step over its stages without touching them.
    __device__ __forceinline__ void step_over(int k_blocks) {
        for (int kb = 0; kb < k_blocks; ++kb) gg_pipe_advance(&pipe, STAGES);
    }
    // Nothing to compute in a tile this warpgroup must still release (a CTA pair's idle half).
    template <class SPAN>
    __device__ __forceinline__ void skip_tile(int k_blocks, SPAN &span) {
        for (int kb = 0; kb < k_blocks; ++kb) {
            gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
            if (kb == 0) span.mark();
            if (leader) LOADS::release(&empty[pipe.stage]);
            gg_pipe_advance(&pipe, STAGES);
        }
    }
};

// ---- Launch ----
// Every k3 kernel takes the same parameters (K3_KERNEL_PARAMS): the two tensor maps, C, the
// device-side row offsets (steps 2-4), the host-built tile list (step 1), the sizes and the
// trace sink. Scalars rather than one struct: ptxas honours __restrict__ on a parameter, not on
// a struct member, and the epilogue spilled more without it.
#define K3_KERNEL_PARAMS(TRACE)                                                                         \
    const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,              \
        uint16_t *__restrict__ C, const int *__restrict__ row_offsets, const GgTile *__restrict__ tiles, \
        int tokens, int experts, int k, int n, const typename gg::Trace<TRACE>::Sink trace
template <bool TRACE>
using Kernel = void (*)(CUtensorMap, CUtensorMap, uint16_t *, const int *, const GgTile *, int, int, int,
                        int, typename gg::Trace<TRACE>::Sink);

// A configuration as the registry sees it (GgKernelInfo, common/gg_kernel.h).
struct Shape {
    int block_n;
    bool adaptive;     // 64-row remainder tiles (GgKernelInfo.block_m = 0)
    bool host_tiles;   // one CTA per tile of the host list (step 1); else one CTA per SM
    bool whole_tiles;  // ping-pong: each consumer warpgroup computes whole tiles
    int cluster = 1;   // CTAs per cluster (the pair ablations: 2)

    constexpr int stages() const {
        return block_n == 128 ? Ring<128>::STAGES : block_n == 192 ? Ring<192>::STAGES : Ring<256>::STAGES;
    }
    constexpr size_t smem() const {
        return block_n == 128 ? Ring<128>::SMEM_BYTES : block_n == 192 ? Ring<192>::SMEM_BYTES : Ring<256>::SMEM_BYTES;
    }
};

// The launch once the tensor maps are built: p is the GEMM as the kernel sees it (rows of A k
// wide, C n wide). EXTRA: parameters after K3_KERNEL_PARAMS (k5_dgrad_tail.cu's workspace).
template <bool TRACE, class KERNEL = Kernel<TRACE>, class... EXTRA>
cudaError_t launch_maps(const GgLaunch *p, KERNEL kernel, Shape s, const CUtensorMap &tmap_a,
                        const CUtensorMap &tmap_b, const typename gg::Trace<TRACE>::Sink &trace,
                        EXTRA... extra) {
    CUDA_TRY(gg_launch_smem_opt_in((const void *)kernel, s.smem()));
    cudaLaunchAttribute cluster_dim = {};
    cluster_dim.id = cudaLaunchAttributeClusterDimension;
    cluster_dim.val.clusterDim = {(unsigned)s.cluster, 1, 1};
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = s.smem();
    cfg.stream = p->stream;
    cfg.attrs = &cluster_dim;
    cfg.numAttrs = s.cluster > 1 ? 1 : 0;
    int ctas = p->num_tiles;  // host list: tokens > 0 and n > 0 (can_implement), so >= 1 tile
    if (!s.host_tiles)  // one CTA per SM (per cluster slot), no more than there are tiles
        CUDA_TRY(gg_launch_persistent_ctas(p, (const void *)kernel, &cfg, s.cluster, BLOCK_M, s.block_n, &ctas));
    cfg.gridDim = dim3(ctas);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, tmap_a, tmap_b, p->c, p->row_offsets, p->tiles, p->tokens,
                                p->experts, p->k, p->n, trace, extra...));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

template <bool TRACE>
cudaError_t launch(const GgLaunch *p, Kernel<TRACE> kernel, Shape s,
                   const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    // A boxes: 64 rows x one 64-wide k slice (one consumer's half). B boxes: 64 k x 64 columns.
    static_assert(BLOCK_K == 64 && PANEL_N == 64, "gg_tmap_a/b build 64-wide boxes");
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;
    return launch_maps<TRACE>(p, kernel, s, tmap_a, tmap_b, trace);
}

inline cudaError_t info_of(GgKernelInfo *info, const void *kernel, Shape s) {
    *info = GgKernelInfo{};  // every field this does not set (tail_split, workspace_bytes, ...) is 0
    info->kernel = kernel;
    info->threads = THREADS;
    info->dynamic_smem = s.smem();
    info->cluster = s.cluster;
    info->block_m = s.adaptive ? 0 : BLOCK_M;
    info->block_n = s.block_n;
    info->block_k = BLOCK_K;
    info->stages = s.stages();
    info->host_tiles = s.host_tiles ? 1 : 0;
    info->whole_tiles = s.whole_tiles ? 1 : 0;
    return cudaSuccess;
}

}  // namespace k3

// One registered configuration NAME of kernel template KERNEL<TARGS..., TRACE> with the
// k3::Shape SHAPE: NAME_launch, NAME_trace_launch (its traced twin) and NAME_info
// (common/gg_kernel.h). plots/sass_tables.py reads KERNEL and TARGS to name each kernel of the
// SASS tables.
#define K3_REGISTER(NAME, KERNEL, SHAPE, ...)                                                        \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                        \
        return k3::launch<false>(p, KERNEL<__VA_ARGS__, false>, SHAPE, {});                          \
    }                                                                                                \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {          \
        return k3::launch<true>(p, KERNEL<__VA_ARGS__, true>, SHAPE, *t);                            \
    }                                                                                                \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                         \
        return k3::info_of(info, (const void *)KERNEL<__VA_ARGS__, false>, SHAPE);                   \
    }
