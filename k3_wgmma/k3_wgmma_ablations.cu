// k3_wgmma ablations: the lesson kernel (k3_wgmma.cu, included below) with the other
// configurations that the README's step table measures. Each configuration changes one of the
// lesson's choices (its Config pieces: tile width, Tiles, Pair, Rows64); the kernel body is
// the lesson's. This file is the k3_wgmma library's one translation unit, so the lesson's
// default configuration is compiled exactly as it reads there.
//
//   k3_wgmma_tile      one CTA per tile of the host-built list (k1/k2's launch), BM = 128
//   k3_wgmma_persist   + persistent grid over the device schedule, BM = 128
//   k3_wgmma_solo64    + adaptive BM, the 64-row tile on consumer 0 alone
//   k3_wgmma_split64   + the 64-row tile split by columns over both consumers (the lesson)
//   k3_wgmma_n128/_n256       the lesson at 128- / 256-wide column blocks
//   k3_wgmma_mc, _mc_n256     row-tile pairs in 2-CTA clusters, B multicast to both
//   k3_wgmma_mca              column-block pairs in 2-CTA clusters, A multicast to both
//   k3_wgmma_persist_n256     k3_wgmma_persist at 256-wide column blocks
// The name k3_wgmma itself is the entry point (k3_wgmma_entry.c): it runs one of these,
// chosen from the problem's shape.
#include "k3_wgmma.cu"

namespace {

// ---- Tiles: the host-built flat list, one CTA per tile, every tile 128 rows ----
// (The list holds 128-row tiles only, so it goes with Fixed128 and Unpaired.)
struct HostTiles {
    static constexpr bool HOST_LIST = true;
    __device__ static void build(Schedule &, const int *, int, int, int, int, bool, GgPairing) {}
    __device__ static int count(const Schedule &, int num_host_tiles) { return num_host_tiles; }
    __device__ static gg::SchedTile at(const Schedule &, const GgTile *tiles, int t, int) {
        const GgTile g = tiles[t];
        return gg::SchedTile{g.expert, g.row0, g.rows, BLOCK_M, g.col0};
    }
    // tokens > 0 and n > 0 (the launcher and can_implement check): at least one tile.
    static cudaError_t grid(const GgLaunch *p, const void *, const cudaLaunchConfig_t *, int, int,
                            int *ctas) {
        *ctas = p->num_tiles;
        return cudaSuccess;
    }
};

// ---- Rows64: what becomes of an expert's remainder of 1..64 rows ----
// Not adaptive: the schedule gives it a 128-row tile, so no tile is 64 rows high.
struct Fixed128 {
    static constexpr bool ADAPTIVE = false;
    __device__ static bool idle(const gg::SchedTile &, int) { return false; }
    template <int BLOCK_N, class RING, int ACC>
    __device__ static void tile64(RING &, float (&)[ACC], int, uint8_t *, uint16_t *, int, int,
                                  int, int, int, int) {}
};
// A 64-row tile on consumer 0 alone, all columns; consumer 1 follows the ring idle.
struct Solo64 {
    static constexpr bool ADAPTIVE = true;
    __device__ static bool idle(const gg::SchedTile &tile, int c) {
        return c == 1 && tile.height == WG_ROWS;
    }
    template <int BLOCK_N, class RING, int ACC>
    __device__ static void tile64(RING &ring, float (&acc)[ACC], int, uint8_t *staging,
                                  uint16_t *C, int n, int row, int rows, int col0, int lane,
                                  int k_blocks) {
        ring.template mma_tile<BLOCK_N>(acc, 0, 0, k_blocks);
        gg::wgmma_store_warp_rows<BLOCK_N / PANEL_N>(acc, staging, C, n, row, rows, col0, lane);
    }
};

// ---- Pair: two CTAs of a cluster on the two tiles of a schedule entry (gg_schedule.h) ----
// Both CTAs walk the same entries. ROWS: row tiles 2p, 2p + 1 of one expert and column block;
// each CTA loads its own A and the B panels p with p % 2 == rank, multicast to both. COLS:
// column blocks 2q, 2q + 1 of one row tile; each loads its own B and the A boxes h with
// h % 2 == rank. A shared box lands at the same offset in both CTAs and completes on each
// CTA's own full barrier, so a full barrier expects every byte of its CTA's stage, whoever
// issued it: the CTAs agree on the count of what they share (ROWS: col0, hence the B panels;
// COLS: row0 and height, hence the A boxes). Both producers write every stage, so a stage's
// release goes to both CTAs' empty barriers (count 8 x 2). A tile without rows (ROWS, odd
// row-tile count: height 0) or without columns (COLS, odd column-block count: col0 >= n) still
// issues its share and its consumers wait and release every stage; it computes and stores
// nothing.
template <GgPairing PAIRING_>
struct Paired {
    static constexpr int CLUSTER = 2;
    static constexpr GgPairing PAIRING = PAIRING_;
    __device__ static int rank() { return (int)gg::cluster_ctarank(); }
    // Barriers initialised and the schedule built here and in the peer before either
    // multicasts into the other or arrives on its barriers.
    __device__ static void start() { gg::cluster_sync(); }
    // No CTA exits while its peer may still arrive on its empty barriers (the peer's last
    // releases). Every multicast into this CTA has landed already: our consumers waited for
    // every full phase. The .aligned barrier wants converged warps.
    __device__ static void finish() {
        __syncwarp();
        gg::cluster_sync();
    }
    __device__ static void load_a(void *box, const CUtensorMap *map, int k0, int row, uint64_t *bar,
                                  int h, int rank) {
        if constexpr (PAIRING != GG_PAIR_COLS) gg::tma_load_2d(box, map, k0, row, bar);
        else if (h % 2 == rank) gg::tma_load_2d_multicast(box, map, k0, row, bar, 0x3);
    }
    __device__ static void load_b(void *box, const CUtensorMap *map, int col, int k0, int expert,
                                  uint64_t *bar, int p, int rank) {
        if constexpr (PAIRING != GG_PAIR_ROWS) gg::tma_load_3d(box, map, col, k0, expert, bar);
        else if (p % 2 == rank) gg::tma_load_3d_multicast(box, map, col, k0, expert, bar, 0x3);
    }
    __device__ static void release(uint64_t *empty, int rank) {
        gg::mbarrier_arrive(empty);
        gg::mbarrier_arrive_cluster(empty, (uint32_t)(rank ^ 1));
    }
};

// ---- The measured configurations: each changes one thing from the one it derives from ----
struct Tile : Lesson {
    using Tiles = HostTiles;
    using Rows64 = Fixed128;
};
struct Persist : Lesson {
    using Rows64 = Fixed128;
};
struct Solo : Lesson {
    using Rows64 = Solo64;
};
struct N128 : Lesson {
    static constexpr int BLOCK_N = 128;
};
struct N256 : Lesson {
    static constexpr int BLOCK_N = 256;
};
struct Mc : Lesson {
    using Pair = Paired<GG_PAIR_ROWS>;
};
struct McN256 : N256 {
    using Pair = Paired<GG_PAIR_ROWS>;
};
struct Mca : Lesson {
    using Pair = Paired<GG_PAIR_COLS>;
};
struct PersistN256 : Persist {
    static constexpr int BLOCK_N = 256;
};

// ---- Ping-pong consumers (an experiment: its own kernel, the lesson's pieces) ----
// Each consumer warpgroup owns whole 128-row tiles, the CTA's tiles alternately: consumer c
// computes its j-th tile when j % 2 == c, both 64-row halves (two m64nN accumulators), and
// stores it itself. While one stores its tile and moves to the next, the other's MMAs keep the
// tensor cores busy. The producer is the lesson's. A stage is released by its owner's four warps
// only; the other consumer steps its ring position over a tile it does not own without looking.
// Order: a consumer starts a tile's K loop only once the other has finished the previous tile's
// (named barrier 1 + j % 2: arrive after the loop of tile j, sync before the loop of tile j + 1),
// so every stage of tile j has been consumed and the phases it waits for cannot be old ones.
// Waiting for the other's full phases instead deadlocks: a consumer two phases behind waits for
// a phase that only its own release can complete (commit 75626bb, hung on the H200).
// An owned tile's K loop into HALVES 64-row accumulators (2: rows 0..127; 1: a 64-row tile). One
// wgmma group stays in flight; a stage is released (leader: lane 0 of each warp) once its group
// has retired. The span is marked when the first stage is full.
template <int BLOCK_N, int STAGES, int STAGE_BYTES, int HALVES, class SPAN>
__device__ __forceinline__ void pingpong_k_loop(float (&acc0)[BLOCK_N / 2], float (&acc1)[BLOCK_N / 2], uint64_t *full,
                                                uint64_t *empty, uint32_t base, GgPipe &pipe, int k_blocks, bool leader,
                                                SPAN &span) {
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
            gg::wgmma_m64k16_bf16<BLOCK_N, 0, 1>(acc0, gg_wgmma_desc_advance(desc_a0, kk * GG_WGMMA_KMAJOR_K16_BYTES),
                                                 b, scale);
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

// ADAPTIVE: an expert's remainder of 1..64 rows is a 64-row tile, computed by its owner alone
// (one accumulator, half the MMAs of a stage); the other consumer's turn comes as usual.
template <int BLOCK_N, bool ADAPTIVE, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
k3_pingpong_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                   uint16_t *__restrict__ C, const int *__restrict__ row_offsets, const GgTile *__restrict__,
                   int, int tokens, int experts, int k, int n, const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    constexpr int STAGES = R::STAGES, OWNER_WARPS = 4, ACC = BLOCK_N / 2;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule sched;
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
                for (int h = 0; h < tile.height / WG_ROWS; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
                for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
                const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES, *b_box = a_box + A_BYTES;
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    for (int h = 0; h < a_loads; ++h)
                        gg::tma_load_2d(a_box + h * HALF_A_BYTES, &tmap_a, kb * BLOCK_K, tile.row0 + h * WG_ROWS,
                                        &full[stage]);
                    for (int p = 0; p < b_loads; ++p)
                        gg::tma_load_3d(b_box + p * PANEL_BYTES, &tmap_b, tile.col0 + p * PANEL_N, kb * BLOCK_K,
                                        tile.expert, &full[stage]);
                    if (kb == 0) span.mark();
                }
                span.end(trace, GG_TRACE_PRODUCER, t, tile.expert, tile.row0, tile.rows, tile.col0, true);
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
            Trace span;
            if (j > 0) gg::named_barrier_sync(1 + (j - 1) % 2, 2 * WG_THREADS);  // tile j - 1's loop is done
            const bool both_halves = !ADAPTIVE || tile.height == BLOCK_M;
            if (both_halves)  // two code paths, each with all its wgmma: a branch between wgmma serializes them
                pingpong_k_loop<BLOCK_N, STAGES, R::STAGE_BYTES, 2>(acc0, acc1, full, empty, base, pipe, k_blocks,
                                                                      lane == 0, span);
            else
                pingpong_k_loop<BLOCK_N, STAGES, R::STAGE_BYTES, 1>(acc0, acc1, full, empty, base, pipe, k_blocks,
                                                                      lane == 0, span);
            gg::named_barrier_arrive(1 + j % 2, 2 * WG_THREADS);  // the other may start tile j + 1
            gg::wgmma_store_warp_rows<R::PANELS>(acc0, staging, C, n, tile.row0 + warp_row, tile.rows - warp_row,
                                                 tile.col0, lane);
            if (both_halves)
                gg::wgmma_store_warp_rows<R::PANELS>(acc1, staging, C, n, tile.row0 + WG_ROWS + warp_row,
                                                     tile.rows - WG_ROWS - warp_row, tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0)
                span.end(trace, GG_TRACE_CONSUMER + c, t, tile.expert, tile.row0, tile.rows, tile.col0, true);
        }
    }
}

template <int BLOCK_N, bool ADAPTIVE>
struct PingPong {
    static cudaError_t info(GgKernelInfo *info) {
        info->kernel = (const void *)k3_pingpong_kernel<BLOCK_N, ADAPTIVE, false>;
        info->threads = THREADS;
        info->dynamic_smem = Ring<BLOCK_N>::SMEM_BYTES;
        info->cluster = 1;
        info->block_m = ADAPTIVE ? 0 : BLOCK_M;
        info->block_n = BLOCK_N;
        info->block_k = BLOCK_K;
        info->stages = Ring<BLOCK_N>::STAGES;
        info->host_tiles = 0;
        return cudaSuccess;
    }
    template <bool TRACE>
    static cudaError_t launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
        if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;
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
        CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_pingpong_kernel<BLOCK_N, ADAPTIVE, TRACE>, tmap_a, tmap_b, p->c, p->row_offsets,
                                    p->tiles, p->num_tiles, p->tokens, p->experts, p->k, p->n, trace));
        CUDA_LAUNCH_CHECK();
        return cudaSuccess;
    }
};

}  // namespace

#define K3_PINGPONG(NAME, BN, ADAPTIVE)                                                              \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) { return PingPong<BN, ADAPTIVE>::launch<false>(p, {}); } \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {              \
        return PingPong<BN, ADAPTIVE>::launch<true>(p, *t);                                              \
    }                                                                                                    \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) { return PingPong<BN, ADAPTIVE>::info(info); }
K3_PINGPONG(k3_wgmma_pingpong, 192, false)
K3_PINGPONG(k3_wgmma_pingpong_n128, 128, false)
K3_PINGPONG(k3_wgmma_pingpong64, 192, true)

K3_CONFIG(k3_wgmma_tile, Tile)
K3_CONFIG(k3_wgmma_persist, Persist)
K3_CONFIG(k3_wgmma_solo64, Solo)
K3_CONFIG(k3_wgmma_n128, N128)
K3_CONFIG(k3_wgmma_n256, N256)
K3_CONFIG(k3_wgmma_mc, Mc)
K3_CONFIG(k3_wgmma_mc_n256, McN256)
K3_CONFIG(k3_wgmma_mca, Mca)
K3_CONFIG(k3_wgmma_persist_n256, PersistN256)
