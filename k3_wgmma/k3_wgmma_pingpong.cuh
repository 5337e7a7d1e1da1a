// k3_wgmma_pingpong — ping-pong consumers: the k3_wgmma lesson (k3_wgmma.cu) with its two consumer
// warpgroups owning whole tiles in turn instead of sharing each tile. Included at the end of
// k3_wgmma_ablations.cu (the stage's one translation unit): it uses the lesson's constants, Ring,
// schedule and epilogue store; its producer is the lesson's loop without the CTA-pair hooks.
//
// What changed since the lesson: in the lesson both consumers compute each tile (64 rows each)
// and both then store it, so the tensor cores idle while a tile's C goes out (the traced gap
// between a consumer's tiles, k3 README). Here consumer c computes the CTA's j-th tile when
// j % 2 == c, all its rows (two m64nN accumulators), and stores it itself; while it stores, the
// other consumer's MMAs on tile j + 1 keep the tensor cores busy.
// Tile         128 x BLOCK_N (192 or 128; 256 does not fit: two 64 x 256 fp32 accumulators are 256
//              registers, a consumer has 232). ADAPTIVE: an expert's remainder of 1..64 rows is a
//              64-row tile that its owner computes alone (one accumulator, half a stage's MMAs).
// Threads      the lesson's: producer warpgroup (thread 0 issues every TMA) + 2 consumers.
// Shared mem   the lesson's Ring<BLOCK_N>: same stages, same per-warp epilogue staging.
// Pipeline     full[s] as in the lesson; empty[s] counts 4 arrivals, the owner's four warps. The
//              other consumer steps its ring position over a tile it does not own without
//              touching the barriers.
// Order        a consumer starts tile j's K loop only after the other has finished tile j - 1's:
//              named barrier 1 + j % 2 (bar.arrive after the loop of tile j, bar.sync before the
//              loop of tile j + 1). Every stage of tile j - 1 has then been waited for, so the full
//              phase the owner of tile j waits for cannot be one already past. Without that order
//              (each consumer watching the other's full phases instead) a consumer two phases
//              behind waits for a phase only its own release can complete: commit 75626bb hung on
//              the H200 (results/h200/evidence/k3_pingpong-75626bb62137.log).
// Run it       build/bin/ggemm run --kernel k3_wgmma_pingpong (or _pingpong64, _pingpong_n128);
//              k3_wgmma (the entry point) picks one of the three by its rule (k3_wgmma_entry.c).

namespace {

// An owned tile's K loop into HALVES 64-row accumulators (2: rows 0..127; 1: a 64-row tile). One
// wgmma group stays in flight; a stage is released (leader: lane 0 of each warp) once its group
// has retired. The span is marked when the first stage is full.
template <int BLOCK_N, int STAGES, int STAGE_BYTES, int HALVES, class SPAN>
__device__ __forceinline__ void pingpong_k_loop(float (&acc0)[BLOCK_N / 2], float (&acc1)[BLOCK_N / 2],
                                                uint64_t *full, uint64_t *empty, uint32_t base,
                                                GgPipe &pipe, int k_blocks, bool leader, SPAN &span) {
    int prev_stage = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
        if (kb == 0) span.mark();
        const uint32_t a_addr = base + pipe.stage * STAGE_BYTES;
        const uint64_t desc_a0 = gg_wgmma_desc_a_kmajor_sw128(a_addr);
        const uint64_t desc_a1 = gg_wgmma_desc_a_kmajor_sw128(a_addr + HALF_A_BYTES);
        const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(a_addr + A_BYTES, PANEL_BYTES);
        gg::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
            const uint64_t b = gg_wgmma_desc_advance(desc_b, kk * GG_WGMMA_MNMAJOR_K16_BYTES);
            const int scale = (kb > 0 || kk > 0) ? 1 : 0;  // the tile's first k16 overwrites
            gg::wgmma_m64k16_bf16<BLOCK_N, 0, 1>(
                acc0, gg_wgmma_desc_advance(desc_a0, kk * GG_WGMMA_KMAJOR_K16_BYTES), b, scale);
            if constexpr (HALVES == 2)
                gg::wgmma_m64k16_bf16<BLOCK_N, 0, 1>(
                    acc1, gg_wgmma_desc_advance(desc_a1, kk * GG_WGMMA_KMAJOR_K16_BYTES), b, scale);
        }
        gg::wgmma_commit_group();
        gg::wgmma_wait_group<1>();
        if (kb > 0 && leader) gg::mbarrier_arrive(&empty[prev_stage]);
        prev_stage = pipe.stage;
        gg_pipe_advance(&pipe, STAGES);
    }
    gg::wgmma_wait_group<0>();
    if (leader) gg::mbarrier_arrive(&empty[prev_stage]);
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) {
        gg::wgmma_fence_operand(acc0[i]);
        if constexpr (HALVES == 2) gg::wgmma_fence_operand(acc1[i]);
    }
}

// ADAPTIVE: 64-row remainder tiles (the header above); TRACE: the traced twin.
template <int BLOCK_N, bool ADAPTIVE, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
    k3_pingpong_kernel(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, uint16_t *__restrict__ C,
                       const int *__restrict__ row_offsets, const GgTile *__restrict__, int, int tokens,
                       int experts, int k, int n, const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    constexpr int STAGES = R::STAGES, OWNER_WARPS = 4, ACC = BLOCK_N / 2;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule sched;
    __shared__ uint32_t turn_ns;  // traced twin: when the last K loop ended (low %globaltimer bits)
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], OWNER_WARPS);
        }
        gg::fence_mbarrier_init();
    }
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, ADAPTIVE, GG_PAIR_NONE);
    __syncthreads();
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k / BLOCK_K, wg = threadIdx.x / WG_THREADS;
    if (wg == 0) {
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
                const gg::SchedTile tile = sched.at(t);
                Trace span;
                int a_loads = 0, b_loads = 0;
                for (int h = 0; h < tile.height / WG_ROWS; ++h)
                    a_loads += (tile.row0 + h * WG_ROWS < tokens);
                for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
                const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES, *b_box = a_box + A_BYTES;
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    for (int h = 0; h < a_loads; ++h)
                        gg::tma_load_2d(a_box + h * HALF_A_BYTES, &tmap_a, kb * BLOCK_K,
                                        tile.row0 + h * WG_ROWS, &full[stage]);
                    for (int p = 0; p < b_loads; ++p)
                        gg::tma_load_3d(b_box + p * PANEL_BYTES, &tmap_b, tile.col0 + p * PANEL_N,
                                        kb * BLOCK_K, tile.expert, &full[stage]);
                    if (kb == 0) span.mark();
                }
                span.end(trace, GG_TRACE_PRODUCER, t, tile.expert, tile.row0, tile.rows, tile.col0,
                         true);
            }
        }
    } else {
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        const int warp_row = warp * STAGING_ROWS;
        uint8_t *staging = smem + R::STAGING_OFFSET + (c * 4 + warp) * STAGING_WARP_BYTES;
        const uint32_t base = gg::smem_u32(smem);
        GgPipe pipe = {0, 0};
        float acc0[ACC], acc1[ACC];  // rows 0..63 and 64..127 of the tile
        int j = 0;
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x, ++j) {
            if (j % 2 != c) {  // the other consumer's tile: step over its stages
                for (int kb = 0; kb < k_blocks; ++kb) gg_pipe_advance(&pipe, STAGES);
                continue;
            }
            const gg::SchedTile tile = sched.at(t);
            if (j > 0)
                gg::named_barrier_sync(1 + (j - 1) % 2, 2 * WG_THREADS);  // tile j - 1's loop is done
            Trace span;  // from its turn: the wait for the other's K loop is not this tile's time
            // The timer read above may issue before bar.sync has released the warp (the traces
            // showed turns starting before the previous K loop could have ended); the shared load
            // cannot, so the span starts no earlier than the time the other consumer wrote.
            if constexpr (TRACE)
                if (j > 0 && (int32_t)(turn_ns - span.start) > 0) span.start = span.marked = turn_ns;
            const bool both_halves = !ADAPTIVE || tile.height == BLOCK_M;
            // Two code paths, each with all of its wgmma: a branch between wgmma would serialize
            // them (ptxas C7520).
            if (both_halves)
                pingpong_k_loop<BLOCK_N, STAGES, R::STAGE_BYTES, 2>(acc0, acc1, full, empty, base, pipe,
                                                                    k_blocks, lane == 0, span);
            else
                pingpong_k_loop<BLOCK_N, STAGES, R::STAGE_BYTES, 1>(acc0, acc1, full, empty, base, pipe,
                                                                    k_blocks, lane == 0, span);
            // The other may start tile j + 1. After the CTA's last tile nobody waits for this
            // arrival; compute-sanitizer's synccheck has no objection (evidence log).
            if constexpr (TRACE)
                if (threadIdx.x % WG_THREADS == 0) turn_ns = (uint32_t)Trace::now();
            gg::named_barrier_arrive(1 + j % 2, 2 * WG_THREADS);
            gg::wgmma_store_warp_rows<R::PANELS>(acc0, staging, C, n, tile.row0 + warp_row,
                                                 tile.rows - warp_row, tile.col0, lane);
            if (both_halves)
                gg::wgmma_store_warp_rows<R::PANELS>(acc1, staging, C, n, tile.row0 + WG_ROWS + warp_row,
                                                     tile.rows - WG_ROWS - warp_row, tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0)
                span.end(trace, GG_TRACE_CONSUMER + c, t, tile.expert, tile.row0, tile.rows, tile.col0,
                         true);
        }
    }
}

template <int BLOCK_N, bool ADAPTIVE>
cudaError_t pingpong_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_pingpong_kernel<BLOCK_N, ADAPTIVE, false>;
    info->threads = THREADS;
    info->dynamic_smem = Ring<BLOCK_N>::SMEM_BYTES;
    info->cluster = 1;
    info->block_m = ADAPTIVE ? 0 : BLOCK_M;
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = Ring<BLOCK_N>::STAGES;
    info->host_tiles = 0;
    info->whole_tiles = 1;
    return cudaSuccess;
}

template <int BLOCK_N, bool ADAPTIVE, bool TRACE>
cudaError_t pingpong_launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;
    const void *kernel = (const void *)k3_pingpong_kernel<BLOCK_N, ADAPTIVE, TRACE>;
    const size_t smem = Ring<BLOCK_N>::SMEM_BYTES;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, smem));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = p->stream;
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(p, kernel, &cfg, 1, BLOCK_M, BLOCK_N, &grid));
    cfg.gridDim = dim3(grid);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_pingpong_kernel<BLOCK_N, ADAPTIVE, TRACE>, tmap_a, tmap_b, p->c,
                                p->row_offsets, p->tiles, p->num_tiles, p->tokens, p->experts, p->k, p->n,
                                trace));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

// One registered configuration: width BN, adaptive rows or not (plots/sass_tables.py reads the
// macro's first template arguments, the untraced kernel's, to name it in the SASS tables).
#define K3_PINGPONG_CONFIG(NAME, BN, ADAPTIVE)                                                  \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                   \
        return pingpong_launch<BN, ADAPTIVE, false>(p, {});                                     \
    }                                                                                           \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {     \
        return pingpong_launch<BN, ADAPTIVE, true>(p, *t);                                      \
    }                                                                                           \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) { return pingpong_info<BN, ADAPTIVE>(info); }
K3_PINGPONG_CONFIG(k3_wgmma_pingpong, 192, false)
K3_PINGPONG_CONFIG(k3_wgmma_pingpong_n128, 128, false)
K3_PINGPONG_CONFIG(k3_wgmma_pingpong64, 192, true)
K3_PINGPONG_CONFIG(k3_wgmma_pingpong64_n128, 128, true)
