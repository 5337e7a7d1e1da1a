// k4_router — the MoE layer's router logits in fp32: L [T x E] = X [T x d] · Wr [d x E], bf16
// inputs (sm_90a). It is k3_wgmma's step 1 (k3_wgmma/step1_tile.cu: one CTA per tile, k3's ring
// and consumer main loop from k3_wgmma.cuh) with four changes:
//
// 1. fp32 out. A token's experts are the top-k of its logits, and bf16 logits (8 significant
//    bits) round nearby logits onto each other or past each other; DeepSeek-V3, Qwen3 and
//    Mixtral compute the gate in fp32. The epilogue stores the fp32 accumulators as they are
//    (gg::wgmma_store_f32_warp_rows, common/gg_wgmma_store.cuh).
// 2. The k-blocks split over CTAs. A router is thin (E columns): at small T its tiles alone leave
//    most SMs idle. Split z (blockIdx.z) sums k-blocks [z per, (z + 1) per) into its own slice
//    [T x E] of `partials`; the route kernel adds the slices in split order (deterministic, no
//    atomics). How many: k4_router_splits (k4_moe.h), from the shape alone.
// 3. Any E. k4_moe_setup pads Wr to k4_router_n(E) columns (16-byte rows: TMA's stride rule;
//    above 64 experts whole 128-byte rows, each B box row one aligned L2 line); B boxes past that
//    read zeros; columns >= E are computed and never stored.
// 4. Staggered k, for few experts. Read in step, every CTA asks for the same k-block of Wr at
//    the same moment, and with few experts that k-block is a handful of L2 lines (8 experts: 16
//    bytes a row). Where k4_router_stagger (k4_moe.h) says so, row tile r starts its k range at
//    k-block r % kbs and wraps (such a router has one column block). Measured faster with 8
//    experts at every d tried, not faster with 32 or more; staggering routers of several column
//    blocks made the 256-expert one slower (k4_moe/TRIALS.md, "The router's DRAM rate"; why is a
//    reading).
//
// Tile     128 x BLOCK_N x 64, BLOCK_N = 64, 128 or 256 (k4_router_block_n); consumer warpgroup
//          c computes rows 64c .. 64c + 63: wgmma.m64nBLOCK_Nk16.
// Threads  384: k3's producer warpgroup (thread 0 issues every TMA load) and two consumers.
// Smem     k3's Ring<BLOCK_N> (its epilogue staging unused: the fp32 store needs none).
// Grid     (row tiles x column blocks, 1, splits): one tile and one split per CTA, a row tile's
//          column blocks at consecutive x, so they run side by side (as CTAs were observed to
//          start in index order) and a row of X came from DRAM about once (ncu: k4_moe/TRIALS.md,
//          "The router's grid"); with row tiles consecutive, a row tile's column blocks are a
//          row-tile count apart, and where that is more than a wave each reads X again.
// Preconditions  d % 8 == 0, d >= 8 (X's TMA row stride; a k tail reads zeros); 1 <= E <=
//          K4_ROUTE_MAX_EXPERTS; X and the padded Wr 16-byte aligned: checked below.
// Run it   build/bin/ggemm moe --model qwen3 --tokens 4096 (its time is in the "route" step)
#include "k3_wgmma/k3_wgmma.cuh"
#include "k4_moe.h"
#include "ptx/ptx_griddep.cuh"

namespace {

using namespace k3;  // tile constants, the ring, the consumer main loop
static_assert(K4_ROUTER_BLOCK_M == BLOCK_M && K4_ROUTER_BLOCK_K == BLOCK_K, "k4_moe.h's split arithmetic uses k3's tile");

template <int BLOCK_N, bool STAGGER>
__global__ void __launch_bounds__(THREADS, 1)
router_kernel(const __grid_constant__ CUtensorMap tmap_x, const __grid_constant__ CUtensorMap tmap_wr,
              float *__restrict__ partials, int tokens, int experts, int n_pad, int k_blocks, int split_kb) {
    using R = Ring<BLOCK_N>;
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);  // full: the producer's expect_tx; empty: each consumer warp
    __syncthreads();
    gg::griddep_launch_dependents();  // the route kernel's CTAs may take what SMs are left; they wait for us
    const int col_blocks = (n_pad + BLOCK_N - 1) / BLOCK_N;  // a row tile's CTAs are consecutive (the header, Grid)
    const int row_tile = blockIdx.x / col_blocks, row0 = row_tile * BLOCK_M, col0 = blockIdx.x % col_blocks * BLOCK_N;
    const int kb0 = blockIdx.z * split_kb, kbs = min(split_kb, k_blocks - kb0);  // >= 1 (k4_router_splits)
    const int wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: k3's produce_tile, from k-block kb0 ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            // A boxes wholly past `tokens` and B panels wholly past n_pad are not loaded: they
            // feed only rows and columns that are never stored.
            int a_loads = 0, b_loads = 0;
            for (int h = 0; h < BLOCK_M / WG_ROWS; ++h) a_loads += row0 + h * WG_ROWS < tokens;
            for (int p = 0; p < R::PANELS; ++p) b_loads += col0 + p * PANEL_N < n_pad;
            const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
            GgPipe pipe = {0, 0};
            for (int kb = 0; kb < kbs; ++kb, gg_pipe_advance(&pipe, R::STAGES)) {
                gg::mbarrier_wait_parity(&empty[pipe.stage], gg_pipe_empty_parity(pipe));
                uint8_t *a_box = smem + pipe.stage * R::STAGE_BYTES, *b_box = a_box + A_BYTES;
                gg::mbarrier_arrive_expect_tx(&full[pipe.stage], stage_tx);
                const int k0 = (kb0 + (STAGGER ? (kb + row_tile % kbs) % kbs : kb)) * BLOCK_K;  // change 4
                for (int h = 0; h < a_loads; ++h)
                    gg::tma_load_2d(a_box + h * HALF_A_BYTES, &tmap_x, k0, row0 + h * WG_ROWS, &full[pipe.stage]);
                for (int p = 0; p < b_loads; ++p)
                    gg::tma_load_3d(b_box + p * PANEL_BYTES, &tmap_wr, col0 + p * PANEL_N, k0, 0, &full[pipe.stage]);
            }
        }
    } else {
        // ---------------- consumers: k3's main loop, fp32 epilogue ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        ConsumerRing<R::STAGES, R::STAGE_BYTES> ring{full, empty, gg::smem_u32(smem), lane == 0};
        gg::Trace<false> untraced;
        float acc[BLOCK_N / 2];
        ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, kbs, untraced);
        const int row = row0 + c * WG_ROWS + warp * STAGING_ROWS;  // this warp's 16 rows
        gg::wgmma_store_f32_warp_rows<BLOCK_N>(acc, partials + (size_t)blockIdx.z * tokens * experts, experts,
                                               experts, row, tokens - row, col0, lane);
    }
}

template <int BLOCK_N, bool STAGGER = false>
cudaError_t launch(const CUtensorMap &tmap_x, const CUtensorMap &tmap_wr, float *partials, int tokens,
                   int experts, int d, cudaStream_t st) {
    using R = Ring<BLOCK_N>;
    const void *kernel = (const void *)router_kernel<BLOCK_N, STAGGER>;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, R::SMEM_BYTES));
    const int n_pad = k4_router_n(experts);
    const dim3 grid((tokens + BLOCK_M - 1) / BLOCK_M * ((n_pad + BLOCK_N - 1) / BLOCK_N), 1,
                    k4_router_splits(tokens, experts, d));
    router_kernel<BLOCK_N, STAGGER><<<grid, THREADS, R::SMEM_BYTES, st>>>(
        tmap_x, tmap_wr, partials, tokens, experts, n_pad, k_blocks_of(d), k4_router_split_kblocks(tokens, experts, d));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t k4_router(const uint16_t *x, const uint16_t *wr_padded, int tokens, int experts, int d,
                                 float *partials, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    if (d < 8 || d % 8 || experts < 1 || experts > K4_ROUTE_MAX_EXPERTS) return cudaErrorInvalidValue;
    if (!x || !wr_padded || !partials) return cudaErrorInvalidValue;  // wr_padded: k4_moe_setup not run
    if (((uintptr_t)x | (uintptr_t)wr_padded | (uintptr_t)partials) % 16) return cudaErrorInvalidValue;
    // As k3 sees it: A = X [T x d], B = the padded Wr, one "expert" [1 x d x n_pad].
    GgLaunch g = {};
    g.a = x;
    g.b = wr_padded;
    g.tokens = tokens;
    g.experts = 1;
    g.k = d;
    g.n = k4_router_n(experts);
    CUtensorMap tmap_x, tmap_wr;
    if (gg_tmap_a(&tmap_x, &g, WG_ROWS) || gg_tmap_b(&tmap_wr, &g)) return cudaErrorInvalidValue;
    switch (k4_router_block_n(tokens, experts)) {
    case 256: return launch<256>(tmap_x, tmap_wr, partials, tokens, experts, d, st);
    case 128: return launch<128>(tmap_x, tmap_wr, partials, tokens, experts, d, st);
    default:  // only the 64-column tile can be a quarter real columns (k4_router_stagger)
        return k4_router_stagger(experts, 64) ? launch<64, true>(tmap_x, tmap_wr, partials, tokens, experts, d, st)
                                              : launch<64>(tmap_x, tmap_wr, partials, tokens, experts, d, st);
    }
}
