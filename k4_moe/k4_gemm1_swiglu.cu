// k4_gemm1_swiglu — the MoE layer's first GEMM with its gather and its activation fused in:
//   H[r, :] = silu(X[src(r)] W1_gate[e]) * (X[src(r)] W1_up[e])   for routed row r of expert e
// (sm_90a). The grid, the device schedule, the ring and the consumer main loop are k3_wgmma's
// (k3_wgmma/k3_wgmma.cuh, step3_adaptive.cu); what changed since k3:
//
// 1. A is gathered: routed row r reads token src_token[r] of X, and no gathered copy of X
//    exists. GATHER (below) picks who copies the rows; the default, K4_GATHER_DEFAULT, is
//    K4_GATHER_CP_ASYNC: the 128 producer threads copy 16-byte chunks with cp.async straight
//    into the 128B-swizzled places a TMA box would have filled (gather_cp_async), so the
//    wgmma descriptors are k3's. The TMA gathers are ablations and were the default for a
//    while: a box of ONE row (64 k x 1 row of X, 128B swizzle) can land anywhere, and row r of
//    a tile is one TMA into byte r x 128 of the stage (TMA swizzles by shared-memory address,
//    so the row lands where a 128-row box would have put it; tests/suite_swizzle.c). A TMA
//    takes warp-uniform operands, so ptxas issues the lanes' copies one lane at a time (an
//    ELECT loop per row), and one warp issuing 128 of them per stage fell far behind the
//    stage's wgmmas at large T (k4_moe/TRIALS.md, the k4-gather block).
//    Rows past the tile's valid rows are not loaded: their stale shared memory feeds only rows
//    that are never stored (row i of C reads only row i of A).
// 2. One barrier for A and B. With cp.async, full[s] counts thread 0's arrive.expect_tx for
//    W1's four 64 x 64 panels (by TMA, as k3 loads B) and one cp.async.mbarrier.arrive.noinc per
//    producer thread; cp.async writes through the generic proxy, so the consumers fence
//    (fence.proxy.async) before their wgmmas read the stage. With a TMA gather, full[s] expects
//    one arrive.expect_tx per gathering warp with the bytes of its rows (k4_gather_warp_tx,
//    tested in tests/suite_moe.c) and completes on bytes.
// 3. SwiGLU in the epilogue. W1 is packed once (k4_pack_w1): in every 256-column block the
//    64-column panels alternate gate, up, gate, up, so each gate column has its up column one
//    panel (32 accumulator registers of the same thread) to its right: h = silu(gate) * up is
//    computed in registers and only the 128 H columns of the block are stored.
// 4. Any F % 64 == 0. The packed row has F / 64 gate/up pairs (the interleave runs over the
//    whole row, not per block); when F / 64 is odd the last 256-column block holds one pair
//    (k4_block_pairs) and ends at 2F half-way through. Its two B boxes past 2F are moved back
//    onto the last panel (k4_w1_box_col), so that every box overlaps the tensor and delivers
//    its full bytes (as in k3_tcgen05: no box wholly out of bounds is issued; TileOf::B_STAGE
//    stays every stage's count), and no wgmma reads them: the consumers run an m64n128 on the
//    block's first two panels, so every H column stored comes from its pair's own panels. The
//    stores stop at column F (the epilogue masks columns >= F).
//
// GATHER (K4Gather, k4_moe.h) picks who gathers; the lesson's, K4_GATHER_DEFAULT, is
// K4_GATHER_CP_ASYNC (1. above). The others are ablations (-DGG_ABLATIONS=ON, `ggemm moe --gather
// NAME`, k4_moe/TRIALS.md):
//   K4_GATHER_TMA_WARP       one-row TMAs, all issued by one producer warp (lane l: rows l,
//                            l + 32, l + 64, l + 96, their tokens read once per tile)
//   K4_GATHER_TMA_WARPGROUP  the same TMAs, 32 rows from each of the four producer warps
//   K4_GATHER_CP_ASYNC_M256  the lesson's gather into 256-row tiles of ONE gate/up pair (128
//                            packed columns): a stage still holds 48 KiB (A 256 x 64, W1 two
//                            panels), each consumer computes 128 rows in two m64n128
//                            accumulators, and one W1 stage feeds twice the rows, so the row
//                            tiles of an expert no longer share W1 only by running side by side
//                            (k4_moe/TRIALS.md, "Launch by launch"). Remainders of <= 128 rows run
//                            as a 128-row tile of the same pair, split by rows.
//
// Block tile   128 (or 64) rows x 256 packed columns (128 H columns) x 64 k.
//              128-row tile: consumer c computes rows 64c .. 64c + 63 (wgmma.m64n256k16).
//              64-row tile (an expert's remainder of 1..64 rows, when the schedule is adaptive):
//              split by columns like k3's, at a gate/up pair: consumer c computes all 64 rows of
//              pair c (wgmma.m64n128k16), 64 H columns each.
//              A block of one pair (the last, F / 64 odd): a 128-row tile splits by rows as
//              usual, each consumer on that pair (m64n128k16); in a 64-row tile consumer 0
//              computes it and consumer 1 only releases the stages.
// Threads      384 = producer warpgroup (setmaxnreg.dec 56: all 128 threads gather, GATHER_REGS)
//              + 2 consumer warpgroups (224, MMA_REGS).
// Shared mem   4 stages x (A 128 x 64 + B 64 x 256) = 4 x 48 KiB + 16 KiB staging + 1 KiB slack;
//              the TMA gathers keep a tile's tokens in the gathering lanes' registers.
// Preconditions  d % 64 == 0; F % 64 == 0; 1 <= experts <= 4096; X, W1, H 16-byte aligned.
// Run it       build/bin/ggemm moe --model qwen3 --tokens 4096 --fused
#include "k3_wgmma/k3_wgmma.cuh"
#include "k4_moe.h"
#include "k4_moe/k4_device.cuh"

namespace {

using namespace k3;  // the tile constants, the ring and the consumer main loop are k3's

constexpr int BLOCK_N = 2 * K4_PACK_N;                    // packed columns per tile: gate and up
constexpr int H_N = K4_PACK_N;                            // H columns per tile
static_assert(K4_GLU_PANEL == PANEL_N, "gate/up interleave = one 64-column B panel (swiglu below)");
using R = Ring<BLOCK_N>;
constexpr int STAGES = R::STAGES, STAGE_BYTES = R::STAGE_BYTES, PANELS = R::PANELS;
static_assert(K4_GATHER_ROWS == BLOCK_M && K4_GATHER_ROW_BYTES == ROW_BYTES,
              "k4_gather_warp_tx counts the rows of k3's A stage");
constexpr int ACC = BLOCK_N / 2;                          // fp32 accumulators per thread
// The tile of each variant: 128 rows x 256 packed columns, or (K4_GATHER_CP_ASYNC_M256) 256 rows x
// one gate/up pair. Both fill the stage of k3's Ring<256>, so the ring, its stage count and the
// staging buffers are the same; in a 256-row stage W1's panels start past 256 rows of A.
template <K4Gather GATHER>
struct TileOf {
    static constexpr int M = GATHER == K4_GATHER_CP_ASYNC_M256 ? 2 * BLOCK_M : BLOCK_M;
    static constexpr int N = M == BLOCK_M ? BLOCK_N : 2 * PANEL_N;  // packed columns
    static constexpr int PANELS = N / PANEL_N;
    static constexpr int A_STAGE = M * ROW_BYTES;
    static constexpr uint32_t B_STAGE = PANELS * PANEL_BYTES;
    static_assert(A_STAGE + B_STAGE == STAGE_BYTES, "every variant's stage is k3's Ring<256> stage");
};
constexpr int PAIRS = BLOCK_N / (2 * PANEL_N);            // gate/up pairs of a whole block
static_assert(PAIRS == K4_PACK_N / K4_GLU_PANEL, "k4_block_pairs counts this kernel's pairs");
static_assert(H_N % PANEL_N == 0, "the epilogue stores whole 64-column panels of H");
// setmaxnreg budgets. k3's split (40 / 232) builds the cp.async gather, which holds a tile's 8
// source rows and their addresses, for 40 registers; with the two-level table it spilled in its
// k loop (ptxas -v). At 56 / 224 neither table spills and the consumers' loop and SwiGLU epilogue
// still fit; the fused GEMM1 measured faster on some layers, for reasons not yet measured
// (k4_moe/TRIALS.md, "The fused GEMM1's extra DRAM bytes", trial 4). The budgets must fit within
// what the launch allocates (__launch_bounds__(THREADS, 1): 65536 / THREADS, in steps of 8):
// setmaxnreg.inc waits until the registers it asks for are free.
constexpr int GATHER_REGS = 56, MMA_REGS = 224;
static_assert(MMA_REGS * CONSUMERS * WG_THREADS + GATHER_REGS * WG_THREADS <= 65536 / THREADS / 8 * 8 * THREADS,
              "setmaxnreg budgets exceed the registers the launch allocates");

// The schedule's table: one level (a group is an expert; at() reads shared memory only) up to
// GG_SCHED_MAX_GROUPS = 256 experts, two levels above (at() walks a group's row offsets, state
// the producer keeps live). The kernel is built for both and a layer of <= 256 experts gets the
// one-level table.
constexpr int ONE_LEVEL_EXPERTS = GG_SCHED_MAX_GROUPS;
static_assert(K4_MAX_EXPERTS <= GG_SCHED_MAX_EXPERTS, "more experts than the schedule's index covers");

// SwiGLU on an m64nN accumulator of N packed columns: panels alternate gate, up (64 columns
// each, k4_pack_w1), and a 64-column panel is 32 registers (4 per 8 columns, gg_fragments.h),
// so gate register i of pair q pairs with up register i + 32. H panel q lands in registers
// 32q .. 32q + 31: the layout gg::wgmma_store_warp_rows reads. Pair 0 is read before pair 1
// overwrites registers 32..63.
template <int N, int REGS>
__device__ __forceinline__ void swiglu(float (&acc)[REGS]) {
    static_assert(N / 2 <= REGS, "an m64nN accumulator holds N / 2 registers");
    constexpr int PANEL_REGS = PANEL_N / 2;
#pragma unroll
    for (int q = 0; q < N / (2 * PANEL_N); ++q)
#pragma unroll
        for (int i = 0; i < PANEL_REGS; ++i)
            acc[PANEL_REGS * q + i] = k4::silu(acc[2 * PANEL_REGS * q + i]) * acc[2 * PANEL_REGS * q + PANEL_REGS + i];
}

// ---- Producers: each fills the ring with a tile's k-blocks, A gathered, B (W1) by TMA ----

// W1's panels of one stage: 64 k x 64 PANELS_T packed columns of expert `expert`, as k3 loads B.
// A box past the packed width 2F (a 256-column block of one gate/up pair) loads the last panel
// again: never read (the header, 4.).
template <int PANELS_T = PANELS>
__device__ __forceinline__ void load_w1(uint8_t *b_stage, const CUtensorMap *tmap_w1, const gg::SchedTile &tile,
                                        int kb, int f, uint64_t *bar) {
    for (int p = 0; p < PANELS_T; ++p)
        gg::tma_load_3d(b_stage + p * PANEL_BYTES, tmap_w1, k4_w1_box_col(tile.col0, p, f), kb * BLOCK_K,
                        tile.expert, bar);
}

// Gathering warp `warp` of WARPS (lane `lane`): rows [warp x SHARE, (warp + 1) x SHARE) of every
// tile, one TMA of one 128-byte row each, into row r's place of the stage (the header, 1.).
// Lane 0's arrive.expect_tx is the warp's one arrival on full[s], so the phase cannot complete
// before the warp's bytes are announced, in whatever order they and the bytes reach the barrier.
template <class T, int WARPS, class Schedule>
__device__ __forceinline__ void gather_tma(const Schedule &sched, int num_tiles, int k_blocks,
                                           const CUtensorMap *tmap_x, const CUtensorMap *tmap_w1,
                                           const int *__restrict__ src_token, int f, uint8_t *smem, uint64_t *full,
                                           uint64_t *empty, int warp, int lane) {
    static_assert(T::M == BLOCK_M, "the TMA gathers fill the lesson's 128-row tile");
    constexpr int SHARE = BLOCK_M / WARPS, PER_LANE = SHARE / 32;
    static_assert(SHARE % 32 == 0, "whole lanes' worth of rows per warp");
    GgPipe pipe = {0, 0};
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
        const gg::SchedTile tile = sched.at(t);
        const int first = warp * SHARE, rows = k4_gather_warp_rows(tile.rows, warp, WARPS);
        const uint32_t tx = k4_gather_warp_tx(tile.rows, warp, WARPS, T::B_STAGE);
        int token[PER_LANE];  // lane l: the tokens of this warp's rows l, l + 32, ... (once a tile)
#pragma unroll
        for (int j = 0; j < PER_LANE; ++j)
            token[j] = 32 * j + lane < rows ? __ldg(src_token + tile.row0 + first + 32 * j + lane) : 0;
        for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
            gg::mbarrier_wait_parity(&empty[pipe.stage], gg_pipe_empty_parity(pipe));
            uint8_t *a_rows = smem + pipe.stage * STAGE_BYTES + first * ROW_BYTES;
            uint64_t *bar = &full[pipe.stage];
            if (lane == 0) {
                gg::mbarrier_arrive_expect_tx(bar, tx);
                if (warp == 0) load_w1(smem + pipe.stage * STAGE_BYTES + A_BYTES, tmap_w1, tile, kb, f, bar);
            }
#pragma unroll
            for (int j = 0; j < PER_LANE; ++j)
                if (32 * j + lane < rows)
                    gg::tma_load_2d(a_rows + (32 * j + lane) * ROW_BYTES, tmap_x, kb * BLOCK_K, token[j], bar);
        }
    }
}

// The first version (K4_GATHER_CP_ASYNC): the 128 producer threads copy 16-byte chunks, thread t
// chunk t % 8 of rows t / 8 + 16 i, into the swizzled positions; thread 0 also loads W1. The
// copies carry the .L2::256B hint (gg::cp_async_16_l2_256): the rows are scattered lines of X, and
// a miss can bring a neighbouring k-block of its row into L2 with it (k4_moe/TRIALS.md, "The fused
// GEMM1's extra DRAM bytes": the pf256 build).
template <class T, class Schedule>
__device__ __forceinline__ void gather_cp_async(const Schedule &sched, int num_tiles, int k_blocks,
                                                const CUtensorMap *tmap_w1, const uint16_t *__restrict__ x,
                                                const int *__restrict__ src_token, int d, int f, uint8_t *smem,
                                                uint64_t *full, uint64_t *empty) {
    constexpr int CHUNKS = ROW_BYTES / 16;              // 16-byte chunks of a 128-byte A row
    constexpr int ROWS_PER_PASS = WG_THREADS / CHUNKS;  // rows one sweep of the producer covers
    const int chunk = threadIdx.x % CHUNKS, row_in_pass = threadIdx.x / CHUNKS;
    GgPipe pipe = {0, 0};
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
        const gg::SchedTile tile = sched.at(t);
        const int passes = tile.height / ROWS_PER_PASS;
        // This thread's chunk of each source row at k-block 0, for the whole tile (null: past the
        // expert's rows, not loaded). Addresses, not token indices: the loop below then adds one
        // offset per copy (k4_moe/TRIALS.md, "Session 23": the build for 4096 experts lost its
        // slowdown at 256 experts with them).
        const uint16_t *src[T::M / ROWS_PER_PASS];
#pragma unroll
        for (int i = 0; i < T::M / ROWS_PER_PASS; ++i) {
            const int r = row_in_pass + i * ROWS_PER_PASS;
            src[i] = (i < passes && r < tile.rows) ? x + (size_t)__ldg(src_token + tile.row0 + r) * d + chunk * 8
                                                   : nullptr;
        }
        for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
            gg::mbarrier_wait_parity(&empty[pipe.stage], gg_pipe_empty_parity(pipe));
            uint8_t *a_tile = smem + pipe.stage * STAGE_BYTES;
            if (threadIdx.x == 0) {
                gg::mbarrier_arrive_expect_tx(&full[pipe.stage], T::B_STAGE);
                load_w1<T::PANELS>(a_tile + T::A_STAGE, tmap_w1, tile, kb, f, &full[pipe.stage]);
            }
#pragma unroll
            for (int i = 0; i < T::M / ROWS_PER_PASS; ++i)
                if (src[i])
                    gg::cp_async_16_l2_256(a_tile + gg_swizzle128(row_in_pass + i * ROWS_PER_PASS, chunk),
                                           src[i] + kb * BLOCK_K);
            gg::cp_async_mbarrier_arrive_noinc(&full[pipe.stage]);
        }
    }
}

// A consumer's share of a tile of one gate/up pair (K4_GATHER_CP_ASYNC_M256): of a 256-row tile,
// rows 128c .. 128c + 127 in two m64n128 accumulators; of a 128-row tile (an expert's remainder),
// rows 64c .. 64c + 63 in one. 64 H columns from each.
template <class T, class Ring>
__device__ __forceinline__ void consume_pair_tile(Ring &ring, const gg::SchedTile &tile, int c, int warp, int lane,
                                                  uint8_t *staging, uint16_t *__restrict__ h, int f, int k_blocks) {
    constexpr uint32_t B_OFF = T::A_STAGE - A_BYTES;  // mma_k_loop finds B at A_BYTES + b_off
    gg::Trace<false> untraced;
    float acc0[T::N / 2], acc1[T::N / 2];
    const int end = tile.row0 + tile.rows, col = tile.col0 / 2;
    int row = tile.row0 + warp * STAGING_ROWS;
    const bool tall = tile.height == T::M;
    if (tall)
        ring.template mma<T::N, 2>(acc0, acc1, c * 2 * HALF_A_BYTES, B_OFF, k_blocks, untraced);
    else
        ring.template mma<T::N>(acc0, c * HALF_A_BYTES, B_OFF, k_blocks, untraced);
    row += c * (tall ? 2 : 1) * WG_ROWS;
    swiglu<T::N>(acc0);
    gg::wgmma_store_warp_rows<1>(acc0, staging, h, f, row, end - row, col, lane);
    if (tall) {
        swiglu<T::N>(acc1);
        gg::wgmma_store_warp_rows<1>(acc1, staging, h, f, row + WG_ROWS, end - row - WG_ROWS, col, lane);
    }
}

template <K4Gather GATHER, int MAX_EXPERTS>
__global__ void __launch_bounds__(THREADS, 1)
gemm1_swiglu_kernel(const __grid_constant__ CUtensorMap tmap_w1, const __grid_constant__ CUtensorMap tmap_x,
                    const uint16_t *__restrict__ x, const int *__restrict__ src_token,
                    const int *__restrict__ row_offsets, uint16_t *__restrict__ h, int rows, int experts, int d,
                    int f, bool adaptive) {
    using T = TileOf<GATHER>;
    constexpr bool CP_ASYNC = GATHER == K4_GATHER_CP_ASYNC || GATHER == K4_GATHER_CP_ASYNC_M256;
    constexpr int GATHER_WARPS = GATHER == K4_GATHER_TMA_WARPGROUP ? WARPS_PER_WG : 1;
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS, T::M> sched;
    uint8_t *smem = ring_start(smem_raw);
    // full: one expect_tx per gathering warp (TMA), or thread 0's for B + every copier (cp.async)
    init_ring(full, empty, CP_ASYNC ? 1 + WG_THREADS : GATHER_WARPS, CONSUMER_WARPS);
    // Packed W1 has 2F columns; the schedule walks them in blocks of the tile's width.
    sched.build(row_offsets, experts, rows, 2 * f, T::N, adaptive);  // ends with __syncthreads
    const int num_tiles = sched.total(), k_blocks = d / BLOCK_K;
    const int wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer warpgroup: A gathered, B by TMA ----------------
        gg::setmaxnreg_dec<GATHER_REGS>();
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if constexpr (CP_ASYNC)
            gather_cp_async<T>(sched, num_tiles, k_blocks, &tmap_w1, x, src_token, d, f, smem, full, empty);
        else if (warp < GATHER_WARPS)
            gather_tma<T, GATHER_WARPS>(sched, num_tiles, k_blocks, &tmap_x, &tmap_w1, src_token, f, smem, full,
                                        empty, warp, lane);
    } else {
        // ---------------- consumers: k3's MMA loop, SwiGLU epilogue ----------------
        gg::setmaxnreg_inc<MMA_REGS>();
        const int c = wg - 1;
        const int warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        // k3's main loop; with the cp.async gather, with the proxy fence (A written by cp.async).
        ConsumerRing<STAGES, STAGE_BYTES, OwnLoads, CP_ASYNC> ring{full, empty, gg::smem_u32(smem), lane == 0};
        gg::Trace<false> untraced;
        float acc[ACC];
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            if constexpr (T::M != BLOCK_M) {  // the 256-row ablation
                consume_pair_tile<T>(ring, tile, c, warp, lane, staging, h, f, k_blocks);
                continue;
            }
            const int pairs = k4_block_pairs(tile.col0, f);  // PAIRS, or 1 (last block, F / 64 odd)
            const bool split_rows = tile.height == BLOCK_M;
            int row = tile.row0 + warp * STAGING_ROWS, col = tile.col0 / 2;
            if (split_rows && pairs == PAIRS) {
                // Consumer c: rows 64c .. 64c + 63, all 256 packed columns = 128 H columns.
                ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks, untraced);
                row += c * WG_ROWS;
                swiglu<BLOCK_N>(acc);
                gg::wgmma_store_warp_rows<H_N / PANEL_N>(acc, staging, h, f, row, tile.row0 + tile.rows - row, col, lane);
            } else if (split_rows || c < pairs) {
                // One gate/up pair per consumer (128 packed columns = 64 H columns). 64-row
                // tile: consumer c takes pair c, so both work, each on its own pair. 128-row
                // tile of a one-pair block: consumer c takes rows 64c .. 64c + 63 of pair 0.
                const int pair = split_rows ? 0 : c;
                if (split_rows) row += c * WG_ROWS;
                ring.template mma<BLOCK_N / 2>(acc, split_rows ? c * HALF_A_BYTES : 0, pair * 2 * PANEL_BYTES,
                                               k_blocks, untraced);
                swiglu<BLOCK_N / 2>(acc);
                gg::wgmma_store_warp_rows<1>(acc, staging, h, f, row, tile.row0 + tile.rows - row, col + pair * PANEL_N,
                                             lane);
            } else {
                // 64-row tile of a one-pair block: no pair for consumer 1 (its two panels are
                // copies of the last one); it releases the stages so that the ring runs on.
                ring.skip_tile(k_blocks, untraced);
            }
        }
    }
}

// The kernel of each gather this build has: the lesson's always, every one with GG_ABLATIONS.
using GemmKernel = void (*)(CUtensorMap, CUtensorMap, const uint16_t *, const int *, const int *, uint16_t *, int,
                            int, int, int, bool);
template <K4Gather GATHER>
GemmKernel for_experts(int experts) {
    return experts <= ONE_LEVEL_EXPERTS ? gemm1_swiglu_kernel<GATHER, ONE_LEVEL_EXPERTS>
                                        : gemm1_swiglu_kernel<GATHER, K4_MAX_EXPERTS>;
}
GemmKernel kernel_of(K4Gather gather, int experts) {
#ifdef GG_ABLATIONS
    switch (gather) {
    case K4_GATHER_TMA_WARP: return for_experts<K4_GATHER_TMA_WARP>(experts);
    case K4_GATHER_TMA_WARPGROUP: return for_experts<K4_GATHER_TMA_WARPGROUP>(experts);
    case K4_GATHER_CP_ASYNC: return for_experts<K4_GATHER_CP_ASYNC>(experts);
    case K4_GATHER_CP_ASYNC_M256: return for_experts<K4_GATHER_CP_ASYNC_M256>(experts);
    default: return nullptr;
    }
#else
    return gather == K4_GATHER_DEFAULT ? for_experts<K4_GATHER_DEFAULT>(experts) : nullptr;
#endif
}

}  // namespace

extern "C" int k4_gather_built(K4Gather gather) { return kernel_of(gather, 1) != nullptr; }

extern "C" cudaError_t k4_gemm1_swiglu(const uint16_t *x, int tokens, const int *src_token, const int *row_offsets,
                                       const uint16_t *w1_packed, uint16_t *h, int rows, int experts, int d, int f,
                                       int num_sms, K4Gather gather, cudaStream_t st) {
    if (rows <= 0) return cudaSuccess;
    if (d < BLOCK_K || d % BLOCK_K || f < K4_GLU_PANEL || f % K4_GLU_PANEL || experts < 1 || experts > K4_MAX_EXPERTS ||
        tokens < 1)
        return cudaErrorInvalidValue;
    if (((uintptr_t)x | (uintptr_t)w1_packed | (uintptr_t)h) % 16) return cudaErrorInvalidValue;
    const GemmKernel kernel = kernel_of(gather, experts);
    if (!kernel) return cudaErrorNotSupported;  // an ablation, in a build without GG_ABLATIONS
    // The GEMM as k3 sees it: routed rows x (W1 packed: a [experts x d x 2F] B operand, in k3's
    // 64 x 64 boxes).
    GgLaunch g = {};
    g.b = w1_packed;
    g.tokens = rows;
    g.experts = experts;
    g.k = d;
    g.n = 2 * f;
    g.num_sms = num_sms;
    // X [tokens x d] as an A operand in boxes of one row: the TMA gathers' tensor map (the
    // cp.async gather reads X through its pointer: no map to encode on every launch).
    CUtensorMap tmap_w1, tmap_x = {};
    const int tma_gather = gather == K4_GATHER_TMA_WARP || gather == K4_GATHER_TMA_WARPGROUP;
    if (gg_tmap_b(&tmap_w1, &g) || (tma_gather && gg_tmap_rows(&tmap_x, x, d, tokens, 1)))
        return cudaErrorInvalidValue;
    const GgShape shape = {rows, experts, d, 2 * f};
    GgGpu gpu;
    CUDA_TRY(gg_launch_gpu(&g, &gpu));
    // Half-height remainder tiles: k3's cost model decides for the 128-row tile (do 64-row tiles
    // pay here); the 256-row variant always takes them, a remainder of <= 128 rows being the
    // lesson's own tile height.
    const int m256 = gather == K4_GATHER_CP_ASYNC_M256;
    const int tile_m = m256 ? TileOf<K4_GATHER_CP_ASYNC_M256>::M : BLOCK_M;
    const int tile_n = m256 ? TileOf<K4_GATHER_CP_ASYNC_M256>::N : BLOCK_N;
    const bool adaptive = m256 || k3_wgmma_adaptive_rows(&shape, &gpu, BLOCK_N);
    CUDA_TRY(gg_launch_smem_opt_in((const void *)kernel, R::SMEM_BYTES));
    const cudaLaunchConfig_t cfg = {};  // one CTA per cluster: no occupancy query needed
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(&g, (const void *)kernel, &cfg, 1, tile_m, tile_n, &grid));
    kernel<<<grid, THREADS, R::SMEM_BYTES, st>>>(tmap_w1, tmap_x, x, src_token, row_offsets, h, rows, experts, d, f,
                                                 adaptive);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
