// k5_backward, dgrad — dA = dC_e · B_e^T per expert (sm_90a): k5_dgrad.
//
// What changed since k3 step 2 (step2_persistent.cu): the operands. The product is ragged-M
// again: expert e's m_e rows of dC [tokens x n] times B_e^T, into dA [tokens x k]; so the
// output tiles, their device-side schedule (gg::TileSchedule, BLOCK_N columns of k), the ring,
// the roles and the epilogue are step 2's, with n and k trading places: the reduction runs over
// n, the output is k wide. Only B changes shape. B is stored [experts x k x n] with n contiguous,
// and the GEMM's B operand is B_e^T [n x k]: element (r, w) = B_e[w][r] is contiguous along r,
// the reduction index, so this B is K-major, where the forward's was N-major. Nothing is
// transposed in memory or in shared memory: the same TMA map as the forward's B (k3's
// gg_tmap_b, boxes of 64 n x 64 k of one expert) is asked for the box at (reduction block,
// output columns) instead of (output columns, reduction block) (k5::TransposedBLoads); each
// box lands as 64 rows of 128 B, one row per output column, which is A's layout, and the wgmma
// reads it with A's descriptor and imm-trans-b = 0 (k5_backward.cuh derives both).
//
// Tile     128 x 256 x 64 (rows x columns of dA x n per stage): k is usually a multiple of 256
//          (model widths), so no ragged column block; consumer c computes rows 64c .. 64c + 63,
//          4 wgmma.m64n256k16 per stage, 128 fp32 accumulators per thread.
// Threads  k3's: producer warpgroup (thread 0 issues TMA) + 2 consumer warpgroups, setmaxnreg.
// Smem     k3's Ring<256>: stages of dC 128 x 64 + B^T 256 x 64 (48 KiB) as many as fit beside
//          the epilogue staging; the schedule table (static, ~2 KiB).
// Preconditions  k % 8 == 0, n % 8 == 0 (16-byte TMA strides and stores), both > 0; a tail of n
//          past the last whole 64-block reads zeros (both maps clip at n); 1..4096 experts (the
//          schedule's index). Pointers 16-byte aligned (checked at launch).
// Run it   build/bin/ggemm run --kernel k5_dgrad --tokens 16384 --experts 64 --k 1024 --n 2688 --skew 1.2
// Next     k5_wgrad.cu: the other gradient, whose reduction is the ragged dimension.
#include <stdio.h>

#include "k5_backward/k5_backward.cuh"

namespace k5 {
namespace {

constexpr int DGRAD_N = 256;

template <int BLOCK_N, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
dgrad_kernel(const __grid_constant__ CUtensorMap tmap_dc, const __grid_constant__ CUtensorMap tmap_b,
             uint16_t *__restrict__ dA, const int *__restrict__ row_offsets, int tokens, int experts,
             int k, int n, const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);
    // The output is k wide: tiles of BLOCK_N columns of k (ends with __syncthreads()).
    sched.build(row_offsets, experts, tokens, k, BLOCK_N, false);
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k_blocks_of(n), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: dC rows of the tile, B_e^T rows of its columns ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
                const gg::SchedTile tile = sched.at(t);
                Trace span;
                produce_tile<BLOCK_N, TransposedBLoads>(pipe, tile, k_blocks, &tmap_dc, &tmap_b, smem, full,
                                                        empty, tokens, k, 0, span);
                span.end(trace, GG_TRACE_PRODUCER, t, tile, true);
            }
        }
    } else {
        // ---------------- consumers: rows 64c .. 64c + 63 of every tile ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        const int row = c * WG_ROWS + warp * STAGING_ROWS;
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        GgPipe pipe = {0, 0};
        float acc[BLOCK_N / 2];
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            Trace span;
            mma_loop<BLOCK_N, R::STAGES, R::STAGE_BYTES, A_BYTES, DgradOperands>(
                acc, full, empty, gg::smem_u32(smem), pipe, c * HALF_A_BYTES, k_blocks, lane == 0, span,
                [](int, int) {});
            gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, dA, k, tile.row0 + row, tile.rows - row,
                                                 tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, tile, true);
        }
    }
}

}  // namespace
}  // namespace k5

extern "C" int k5_dgrad_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k <= 0 || s->k % 8 != 0 || s->n <= 0 || s->n % 8 != 0) {
        snprintf(why, len, "k5_dgrad needs k and n multiples of 8, > 0 (k = %d, n = %d)", s->k, s->n);
        return 0;
    }
    if (s->experts < 1 || s->experts > k3::MAX_EXPERTS) {
        snprintf(why, len, "k5_dgrad handles 1..%d experts (experts = %d)", k3::MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

namespace k5 {
namespace {

// The launch and its traced twin (TRACE: the kernel records into trace, common/gg_trace.h).
template <bool TRACE>
cudaError_t launch_dgrad(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    constexpr int BLOCK_N = DGRAD_N;
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k5_dgrad")) return cudaErrorInvalidValue;
    CUtensorMap tmap_dc, tmap_b;  // dC [tokens x n]; B [experts x k x n] exactly as the forward's
    if (gg_tmap_rows(&tmap_dc, p->a, p->n, p->tokens, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;
    const void *kernel = (const void *)dgrad_kernel<BLOCK_N, TRACE>;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, Ring<BLOCK_N>::SMEM_BYTES));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = Ring<BLOCK_N>::SMEM_BYTES;
    cfg.stream = p->stream;
    GgLaunch out = *p;  // the persistent grid's bound counts output column blocks: k wide
    out.n = p->k;
    int ctas;
    CUDA_TRY(gg_launch_persistent_ctas(&out, kernel, &cfg, 1, BLOCK_M, BLOCK_N, &ctas));
    cfg.gridDim = dim3(ctas);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, dgrad_kernel<BLOCK_N, TRACE>, tmap_dc, tmap_b, p->c, p->row_offsets,
                                p->tokens, p->experts, p->k, p->n, trace));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace
}  // namespace k5

extern "C" cudaError_t k5_dgrad_launch(const GgLaunch *p) { return k5::launch_dgrad<false>(p, {}); }
extern "C" cudaError_t k5_dgrad_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {
    return k5::launch_dgrad<true>(p, *t);
}

extern "C" cudaError_t k5_dgrad_info(GgKernelInfo *info) {
    using namespace k5;
    k3::info_of(info, (const void *)dgrad_kernel<DGRAD_N, false>, Shape{DGRAD_N, false, false, false});
    info->pass = GG_PASS_DGRAD;
    return cudaSuccess;
}
