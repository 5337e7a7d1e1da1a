// k3_wgmma_m256 — 256-row tiles at two stage depths: the k3_wgmma lesson (k3_wgmma.cu) with a
// CTA tile twice as tall, each consumer warpgroup computing 128 of its rows (two m64nN
// accumulators) instead of 64. Included at the end of k3_wgmma_ablations.cu.
//
// Why: at K = 8192 and at 16k rows ncu puts L2 at the top of the profile, and the traces put the
// turns of the ping-pong kernel waiting for stages. A 128 x 192 tile brings 128 + 192 rows of k
// through L2 per 128 x 192 multiply-adds per k; a 256 x 192 tile 256 + 192 rows for twice as many:
// 30% fewer L2 bytes per MMA. The first trial of it (commit 88f0a05, 64 k per stage) fitted 3
// stages of 56 KiB instead of 5 of 40, and lost; its profile blamed the stages. Here the stage
// depth is a parameter: BK = 64 is that trial again, BK = 32 halves a stage (28 KiB) so that 7 fit,
// as many bytes in flight as the ping-pong kernel's 5, and the one change between the two
// configurations is the depth.
// Tile         256 x BLOCK_N (192): consumer c computes rows 128c .. 128c + 127 of every tile.
// Threads      the lesson's: producer warpgroup (thread 0 issues every TMA, four 64-row A boxes
//              and the B panels per stage) + 2 consumers.
// Shared mem   RingM256: STAGES x (A 256 x BK + B BK x BLOCK_N) + the lesson's staging. BK = 32:
//              A rows are 64 B, 64B-swizzled (gg_wgmma_desc_a_kmajor_sw64); B keeps 128-byte rows,
//              a panel BK rows deep.
// Pipeline     the lesson's: full[s] count 1, empty[s] count 8 (lane 0 of every consumer warp).
//              Both consumers store at the tile's end (no ping-pong: two 128 x 192 accumulators
//              would not fit a consumer's registers).
// Run it       build/bin/ggemm run --kernel k3_wgmma_m256_k32 --k 8192

namespace {

constexpr int M256 = 256;

template <int BLOCK_N, int BK>
struct RingM256 {
    static_assert(BK == 64 || BK == 32, "a stage row is one 128B or 64B swizzle row");
    static constexpr int PANELS = BLOCK_N / PANEL_N;
    static constexpr int HALF_A = WG_ROWS * BK * 2;  // one A box: 64 rows of BK
    static constexpr int A = M256 * BK * 2;          // four boxes
    static constexpr int PANEL = BK * PANEL_N * 2;   // one B box: BK rows of 64 columns
    static constexpr int STAGE_BYTES = A + PANELS * PANEL;
    static constexpr int STAGING_BYTES = CONSUMER_WARPS * STAGING_WARP_BYTES;
    static constexpr int STAGES = (SMEM_TARGET - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
    static constexpr int STAGING_OFFSET = STAGES * STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + STAGING_BYTES;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(HALF_A % SWIZZLE_ALIGN == 0 && PANEL % SWIZZLE_ALIGN == 0 &&
                      STAGE_BYTES % SWIZZLE_ALIGN == 0,
                  "every box must start on a swizzle atom");
    __device__ static uint64_t desc_a(uint32_t addr) {
        return BK == 64 ? gg_wgmma_desc_a_kmajor_sw128(addr) : gg_wgmma_desc_a_kmajor_sw64(addr);
    }
};

using ScheduleM256 = gg::TileSchedule<MAX_EXPERTS, M256>;

// A consumer's 128 rows of one tile (a_off: its first A box in a stage), one wgmma group in flight;
// a stage is released once its group has retired.
template <int BLOCK_N, int BK, class SPAN>
__device__ __forceinline__ void m256_k_loop(float (&acc0)[BLOCK_N / 2], float (&acc1)[BLOCK_N / 2],
                                            uint64_t *full, uint64_t *empty, uint32_t base, uint32_t a_off,
                                            GgPipe &pipe, int k_blocks, bool leader, SPAN &span) {
    using R = RingM256<BLOCK_N, BK>;
    int prev_stage = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
        if (kb == 0) span.mark();
        const uint32_t stage = base + pipe.stage * R::STAGE_BYTES;
        const uint64_t desc_a0 = R::desc_a(stage + a_off), desc_a1 = R::desc_a(stage + a_off + R::HALF_A);
        const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(stage + R::A, R::PANEL);
        gg::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            const uint64_t b = gg_wgmma_desc_advance(desc_b, kk * GG_WGMMA_MNMAJOR_K16_BYTES);
            const int scale = (kb > 0 || kk > 0) ? 1 : 0;  // the tile's first k16 overwrites
            gg::wgmma_m64k16_bf16<BLOCK_N, 0, 1>(
                acc0, gg_wgmma_desc_advance(desc_a0, kk * GG_WGMMA_KMAJOR_K16_BYTES), b, scale);
            gg::wgmma_m64k16_bf16<BLOCK_N, 0, 1>(
                acc1, gg_wgmma_desc_advance(desc_a1, kk * GG_WGMMA_KMAJOR_K16_BYTES), b, scale);
        }
        gg::wgmma_commit_group();
        gg::wgmma_wait_group<1>();
        if (kb > 0 && leader) gg::mbarrier_arrive(&empty[prev_stage]);
        prev_stage = pipe.stage;
        gg_pipe_advance(&pipe, R::STAGES);
    }
    gg::wgmma_wait_group<0>();
    if (leader) gg::mbarrier_arrive(&empty[prev_stage]);
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) {
        gg::wgmma_fence_operand(acc0[i]);
        gg::wgmma_fence_operand(acc1[i]);
    }
}

template <int BLOCK_N, int BK, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
    k3_m256_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                   uint16_t *__restrict__ C, const int *__restrict__ row_offsets, const GgTile *__restrict__,
                   int, int tokens, int experts, int k, int n, const typename gg::Trace<TRACE>::Sink trace) {
    using R = RingM256<BLOCK_N, BK>;
    using Trace = gg::Trace<TRACE>;
    constexpr int STAGES = R::STAGES, ACC = BLOCK_N / 2;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ ScheduleM256 sched;
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], CONSUMER_WARPS);
        }
        gg::fence_mbarrier_init();
    }
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, false, GG_PAIR_NONE);  // ends in __syncthreads
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k / BK, wg = threadIdx.x / WG_THREADS;
    if (wg == 0) {
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
                const gg::SchedTile tile = sched.at(t);
                Trace span;
                int a_loads = 0, b_loads = 0;  // boxes wholly past `tokens` or n are not loaded
                for (int h = 0; h < M256 / WG_ROWS; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
                for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
                const uint32_t stage_tx = a_loads * R::HALF_A + b_loads * R::PANEL;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES, *b_box = a_box + R::A;
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    for (int h = 0; h < a_loads; ++h)
                        gg::tma_load_2d(a_box + h * R::HALF_A, &tmap_a, kb * BK, tile.row0 + h * WG_ROWS,
                                        &full[stage]);
                    for (int p = 0; p < b_loads; ++p)
                        gg::tma_load_3d(b_box + p * R::PANEL, &tmap_b, tile.col0 + p * PANEL_N, kb * BK,
                                        tile.expert, &full[stage]);
                    if (kb == 0) span.mark();
                }
                span.end(trace, GG_TRACE_PRODUCER, t, tile.expert, tile.row0, tile.rows, tile.col0, true);
            }
        }
    } else {
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        uint8_t *staging = smem + R::STAGING_OFFSET + (c * 4 + warp) * STAGING_WARP_BYTES;
        const uint32_t base = gg::smem_u32(smem);
        const int row = c * 2 * WG_ROWS + warp * STAGING_ROWS;  // this warp's first row of acc0
        GgPipe pipe = {0, 0};
        float acc0[ACC], acc1[ACC];  // rows 128c .. 128c + 63 and 128c + 64 .. 128c + 127
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            Trace span;
            // Rows past the tile's valid ones are computed from whatever the stage holds (zeros
            // past `tokens`, another expert's rows before it) and never stored, as in the lesson.
            m256_k_loop<BLOCK_N, BK>(acc0, acc1, full, empty, base, c * 2 * R::HALF_A, pipe, k_blocks,
                                     lane == 0, span);
            gg::wgmma_store_warp_rows<R::PANELS>(acc0, staging, C, n, tile.row0 + row, tile.rows - row,
                                                 tile.col0, lane);
            gg::wgmma_store_warp_rows<R::PANELS>(acc1, staging, C, n, tile.row0 + row + WG_ROWS,
                                                 tile.rows - row - WG_ROWS, tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0)
                span.end(trace, GG_TRACE_CONSUMER + c, t, tile.expert, tile.row0, tile.rows, tile.col0, true);
        }
    }
}

template <int BLOCK_N, int BK>
cudaError_t m256_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_m256_kernel<BLOCK_N, BK, false>;
    info->threads = THREADS;
    info->dynamic_smem = RingM256<BLOCK_N, BK>::SMEM_BYTES;
    info->cluster = 1;
    info->block_m = M256;
    info->block_n = BLOCK_N;
    info->block_k = BK;
    info->stages = RingM256<BLOCK_N, BK>::STAGES;
    info->host_tiles = 0;
    info->whole_tiles = 0;
    return cudaSuccess;
}

template <int BLOCK_N, int BK, bool TRACE>
cudaError_t m256_launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a_k(&tmap_a, p, BK, WG_ROWS) || gg_tmap_b_k(&tmap_b, p, BK)) return cudaErrorInvalidValue;
    const void *kernel = (const void *)k3_m256_kernel<BLOCK_N, BK, TRACE>;
    const size_t smem = RingM256<BLOCK_N, BK>::SMEM_BYTES;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, smem));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = p->stream;
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(p, kernel, &cfg, 1, M256, BLOCK_N, &grid));
    cfg.gridDim = dim3(grid);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_m256_kernel<BLOCK_N, BK, TRACE>, tmap_a, tmap_b, p->c, p->row_offsets,
                                p->tiles, p->num_tiles, p->tokens, p->experts, p->k, p->n, trace));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

// One registered configuration: width BN, BK k per stage (plots/sass_tables.py reads the macro's
// first template arguments, the untraced kernel's, to name it in the SASS tables).
#define K3_M256_CONFIG(NAME, BN, BK)                                                            \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) { return m256_launch<BN, BK, false>(p, {}); } \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {     \
        return m256_launch<BN, BK, true>(p, *t);                                                \
    }                                                                                           \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) { return m256_info<BN, BK>(info); }
K3_M256_CONFIG(k3_wgmma_m256, 192, 64)
K3_M256_CONFIG(k3_wgmma_m256_k32, 192, 32)
