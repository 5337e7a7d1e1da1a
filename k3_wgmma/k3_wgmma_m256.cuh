// k3_wgmma_m256 — 256-row tiles: the k3_wgmma lesson (k3_wgmma.cu) with a CTA tile twice as tall,
// each consumer warpgroup computing 128 of its rows (two m64nN accumulators, the ping-pong
// kernel's K loop) instead of 64. Included at the end of k3_wgmma_ablations.cu, after
// k3_wgmma_pingpong.cuh, whose K loop it calls.
//
// Why: at K = 8192 ncu puts L2 at the top of the profile (lts__throughput, the k3 README's
// ping-pong ncu table), above the tensor pipe. A stage of a 128 x 192 tile brings 128 + 192 rows
// of 64 k through L2 for 128 x 192 x 64 multiply-adds; a 256 x 192 tile brings 256 + 192 rows for
// twice as many: 30% fewer L2 bytes per MMA. What it costs: a stage is 56 KiB, so 3 fit instead of
// 5; the tile's stores are not overlapped with MMAs (both consumers store at its end, as in the
// lesson); an expert's last row tile pads to 256 rows.
// Tile         256 x BLOCK_N (192): consumer c computes rows 128c .. 128c + 127 of every tile.
// Threads      the lesson's: producer warpgroup (thread 0 issues every TMA, four 64-row A boxes
//              and the B panels per stage) + 2 consumers.
// Shared mem   Ring256<BLOCK_N>: 3 stages of A 256 x 64 + B 64 x BLOCK_N + the lesson's staging.
// Pipeline     the lesson's: full[s] count 1, empty[s] count 8 (lane 0 of every consumer warp).
// Run it       build/bin/ggemm run --kernel k3_wgmma_m256 --k 8192

namespace {

constexpr int M256 = 256;
constexpr int M256_A_BYTES = M256 * ROW_BYTES;  // four 64-row A boxes

template <int BLOCK_N>
struct Ring256 {
    static constexpr int PANELS = BLOCK_N / PANEL_N;
    static constexpr int STAGE_BYTES = M256_A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int STAGING_BYTES = CONSUMER_WARPS * STAGING_WARP_BYTES;
    static constexpr int STAGES = (SMEM_TARGET - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
    static constexpr int STAGING_OFFSET = STAGES * STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + STAGING_BYTES;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(STAGE_BYTES % SWIZZLE_ALIGN == 0, "stages must keep the 1024-byte alignment");
};

using Schedule256 = gg::TileSchedule<MAX_EXPERTS, M256>;

template <int BLOCK_N, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
    k3_m256_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                   uint16_t *__restrict__ C, const int *__restrict__ row_offsets, const GgTile *__restrict__,
                   int, int tokens, int experts, int k, int n, const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring256<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    constexpr int STAGES = R::STAGES, ACC = BLOCK_N / 2;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule256 sched;
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
    const int num_tiles = sched.total(), k_blocks = k / BLOCK_K, wg = threadIdx.x / WG_THREADS;
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
                const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES, *b_box = a_box + M256_A_BYTES;
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    for (int h = 0; h < a_loads; ++h)
                        gg::tma_load_2d(a_box + h * HALF_A_BYTES, &tmap_a, kb * BLOCK_K,
                                        tile.row0 + h * WG_ROWS, &full[stage]);
                    for (int p = 0; p < b_loads; ++p)
                        gg::tma_load_3d(b_box + p * PANEL_BYTES, &tmap_b, tile.col0 + p * PANEL_N,
                                        kb * BLOCK_K, tile.expert, &full[stage]);
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
            // Rows past the tile's valid ones are computed from whatever the stage holds and
            // never stored, as in the lesson.
            pingpong_k_loop<BLOCK_N, STAGES, R::STAGE_BYTES, 2, Trace, M256_A_BYTES>(
                acc0, acc1, full, empty, base, pipe, k_blocks, lane == 0, span, c * 2 * HALF_A_BYTES);
            gg::wgmma_store_warp_rows<R::PANELS>(acc0, staging, C, n, tile.row0 + row, tile.rows - row,
                                                 tile.col0, lane);
            gg::wgmma_store_warp_rows<R::PANELS>(acc1, staging, C, n, tile.row0 + row + WG_ROWS,
                                                 tile.rows - row - WG_ROWS, tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0)
                span.end(trace, GG_TRACE_CONSUMER + c, t, tile.expert, tile.row0, tile.rows, tile.col0, true);
        }
    }
}

template <int BLOCK_N>
cudaError_t m256_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_m256_kernel<BLOCK_N, false>;
    info->threads = THREADS;
    info->dynamic_smem = Ring256<BLOCK_N>::SMEM_BYTES;
    info->cluster = 1;
    info->block_m = M256;
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = Ring256<BLOCK_N>::STAGES;
    info->host_tiles = 0;
    info->whole_tiles = 0;
    return cudaSuccess;
}

template <int BLOCK_N, bool TRACE>
cudaError_t m256_launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;
    const void *kernel = (const void *)k3_m256_kernel<BLOCK_N, TRACE>;
    const size_t smem = Ring256<BLOCK_N>::SMEM_BYTES;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, smem));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = p->stream;
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(p, kernel, &cfg, 1, M256, BLOCK_N, &grid));
    cfg.gridDim = dim3(grid);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_m256_kernel<BLOCK_N, TRACE>, tmap_a, tmap_b, p->c, p->row_offsets,
                                p->tiles, p->num_tiles, p->tokens, p->experts, p->k, p->n, trace));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t k3_wgmma_m256_launch(const GgLaunch *p) { return m256_launch<192, false>(p, {}); }
extern "C" cudaError_t k3_wgmma_m256_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {
    return m256_launch<192, true>(p, *t);
}
extern "C" cudaError_t k3_wgmma_m256_info(GgKernelInfo *info) { return m256_info<192>(info); }
