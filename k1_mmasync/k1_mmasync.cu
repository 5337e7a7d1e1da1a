// k1_mmasync — stage 1: the grouped GEMM on tensor cores (cp.async + ldmatrix + mma.sync).
//
// What changed since k0: the math moves from fp32 FFMA to mma.sync.m16n8k16 (bf16 in, fp32
// accumulate), operands stay bf16 in shared memory and reach registers through ldmatrix, and
// global->shared copies become 16-byte cp.async into a two-stage buffer. The schedule is the
// same: the host-built flat tile list, one block per tile, grid = num_tiles.
//
// Block tile   BLOCK_M x 128, K-slices of BLOCK_K = 32 (two k16 steps per slice).
// Threads      256 = 8 warps in every configuration, as a 2 x 4 grid of WARP_M x 32 warp
//              tiles; WARP_M = BLOCK_M / 2 shrinks with the block (64, 32, 16). Every warp
//              both copies (cp.async) and computes (ldmatrix + mma.sync).
// Shared mem   static, STAGES = 2: A[2][BLOCK_M][32+8] + B[2][32][128+8] bf16
//              = 37,888 B (BM 128), 27,648 B (BM 64), 22,528 B (BM 32).
//              The +8 bf16 (16 B) row pad makes the 8 row addresses of every ldmatrix
//              phase land in 8 different 16-byte bank groups (A stride 80 B, B stride 272 B).
// Pipeline     slice kt+1 is in flight while slice kt is computed; kt+2 is issued right
//              after. Two block barriers per slice: before reading a stage, before refilling it.
// FRAG_DB      variant: two register fragment sets; k-step ks+1 is loaded before the MMAs
//              of ks so ldmatrix latency overlaps tensor work.
// Registers    each configuration names the blocks/SM it is built for (MIN_BLOCKS, a
//              __launch_bounds__ register cap): BM 128 -> 2, BM 64 -> 4, BM 32 -> 5,
//              BM 64 FRAG_DB -> 3 (room for the second set). The registers each gets are
//              in README.md's generated resources table.
// Epilogue     register-direct: each lane stores its accumulator pairs as bf16x2 (4 B)
//              at the positions the mma C layout gives it; no shared-memory staging.
// Preconditions  k % 32 == 0 (no K tail), n % 8 == 0 (16-byte cp.async chunks of B rows).
//              The tile list is built for this BLOCK_M (1 <= tile.rows <= BLOCK_M); a, b, c
//              are 16-byte aligned. Rows past tile.rows and columns >= n are copied as zeros
//              (cp.async src size 0 from an in-bounds address) and never stored.
// Run it       build/bin/ggemm run --kernel k1_mmasync_bm128   (also _bm64, _bm32, _bm64_fragdb)
#include <stdint.h>
#include <stdio.h>

#include "gg_check.h"
#include "gg_fragments.h"
#include "gg_kernel.h"
#include "gg_mma_sync_store.cuh"
#include "k1_mmasync.h"
#include "ptx/ptx_ampere.cuh"

namespace {

constexpr int THREADS = 256;  // eight warps in every configuration
constexpr int WARPS = THREADS / 32;
constexpr int STAGES = 2;
constexpr int PAD = 8;        // bf16 elements appended to each shared-memory row
constexpr int CHUNK = 8;      // bf16 elements per 16-byte cp.async

template <int BLOCK_M, int BLOCK_N, int BLOCK_K>
struct SharedTiles {
    uint16_t a[STAGES][BLOCK_M][BLOCK_K + PAD];  // A slice: rows x k, k contiguous
    uint16_t b[STAGES][BLOCK_K][BLOCK_N + PAD];  // B slice: k x cols, cols contiguous
};

// MIN_BLOCKS is the residency each configuration is built for: __launch_bounds__ turns it
// into a register cap of 65536 / (MIN_BLOCKS * 256) per thread (64 for four blocks of BM 64).
template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int WARP_M, int WARP_N, bool FRAG_DB,
          int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
k1_kernel(const uint16_t *__restrict__ A, const uint16_t *__restrict__ B, uint16_t *__restrict__ C,
          const GgTile *__restrict__ tiles, int k, int n) {
    constexpr int WARPS_N = BLOCK_N / WARP_N;
    constexpr int FRAG_M = WARP_M / 16;      // m16 A fragments per warp
    constexpr int FRAG_N = WARP_N / 8;       // n8 B fragments per warp
    constexpr int K_STEPS = BLOCK_K / 16;    // mma k16 steps per slice
    constexpr int FRAG_SETS = FRAG_DB ? 2 : 1;
    constexpr int A_CHUNKS = BLOCK_M * BLOCK_K / CHUNK;
    constexpr int B_CHUNKS = BLOCK_K * BLOCK_N / CHUNK;
    static_assert((BLOCK_M / WARP_M) * WARPS_N == WARPS, "the warp grid must hold exactly 8 warps");
    static_assert(WARP_M % 16 == 0, "a warp tile is a whole number of m16 fragments");
    static_assert(WARP_N % 16 == 0, "B fragments are loaded 16 columns (two n8) per ldmatrix.x4");
    static_assert(BLOCK_K % 16 == 0, "a K-slice is a whole number of k16 steps");
    static_assert(B_CHUNKS % THREADS == 0, "every thread copies the same number of B chunks");

    __shared__ __align__(128) SharedTiles<BLOCK_M, BLOCK_N, BLOCK_K> s;

    const GgTile tile = tiles[blockIdx.x];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int warp_row = (warp / WARPS_N) * WARP_M;  // warp tile origin inside the block tile
    const int warp_col = (warp % WARPS_N) * WARP_N;
    const uint16_t *A_tile = A + (size_t)tile.row0 * k;
    const uint16_t *B_panel = B + (size_t)tile.expert * k * n + tile.col0;

    // One K-slice into one stage. A chunk that is out of range (row past the expert's end,
    // column >= n) copies 0 source bytes, i.e. writes zeros, from row 0 / column col0 of the
    // tile, which always exist: a tile has rows >= 1 and col0 < n.
    auto load_slice = [&](int stage, int k0) {
#pragma unroll
        for (int it = 0; it < (A_CHUNKS + THREADS - 1) / THREADS; ++it) {
            const int i = tid + it * THREADS;
            if (A_CHUNKS % THREADS != 0 && i >= A_CHUNKS) break;  // BM 32: half the threads
            const int r = i / (BLOCK_K / CHUNK), c = (i % (BLOCK_K / CHUNK)) * CHUNK;
            const bool valid = r < tile.rows;
            gg::cp_async_16(&s.a[stage][r][c], A_tile + (size_t)(valid ? r : 0) * k + k0 + c,
                            valid ? 16 : 0);
        }
#pragma unroll
        for (int it = 0; it < B_CHUNKS / THREADS; ++it) {
            const int i = tid + it * THREADS;
            const int r = i / (BLOCK_N / CHUNK), c = (i % (BLOCK_N / CHUNK)) * CHUNK;
            const bool valid = tile.col0 + c < n;  // n % 8 == 0: a chunk is all in or all out
            gg::cp_async_16(&s.b[stage][r][c], B_panel + (size_t)(k0 + r) * n + (valid ? c : 0),
                            valid ? 16 : 0);
        }
    };

    float acc[FRAG_M][FRAG_N][4] = {};
    uint32_t a_frag[FRAG_SETS][FRAG_M][4];
    // b_frag[set][j] holds two n8 fragments from one ldmatrix.x4.trans:
    // regs {0,1} = columns 16j..16j+7, regs {2,3} = columns 16j+8..16j+15 (each: k 0-7, k 8-15).
    uint32_t b_frag[FRAG_SETS][FRAG_N / 2][4];

    // ldmatrix.x4 addresses (gg_fragments.h): lane L gives row L % 16 and 8-column chunk L / 16
    // of a 16 x 16 block. A: rows of the m16 fragment x k of the k16 step -> a0..a3.
    // B (.trans, smem is k x n): k rows x 16 columns -> b0, b1 of columns 0-7, then of 8-15.
    auto load_frags = [&](int set, int stage, int ks) {
        // lab:gap-begin ldmatrix-addresses
#pragma unroll
        for (int fm = 0; fm < FRAG_M; ++fm)
            gg::ldmatrix_x4(a_frag[set][fm], &s.a[stage][gg_ldsm_x4_row(warp_row + fm * 16, lane)]
                                                       [8 * gg_ldsm_x4_chunk(2 * ks, lane)]);
#pragma unroll
        for (int j = 0; j < FRAG_N / 2; ++j)
            gg::ldmatrix_x4_trans(b_frag[set][j], &s.b[stage][gg_ldsm_x4_row(ks * 16, lane)]
                                                             [warp_col + 8 * gg_ldsm_x4_chunk(2 * j, lane)]);
        // lab:gap-end
    };
    auto mma_step = [&](int set) {
#pragma unroll
        for (int fm = 0; fm < FRAG_M; ++fm)
#pragma unroll
            for (int fn = 0; fn < FRAG_N; ++fn)
                gg::mma_bf16_16816(acc[fm][fn], a_frag[set][fm],
                                   &b_frag[set][fn / 2][(fn % 2) * 2]);
    };

    // Exactly one commit group per slice index (empty past the end), so before computing
    // slice kt, STAGES + kt groups exist and wait<STAGES - 1> means "slices 0..kt landed".
    const int slices = k / BLOCK_K;
#pragma unroll
    for (int st = 0; st < STAGES; ++st) {
        if (st < slices) load_slice(st, st * BLOCK_K);
        gg::cp_async_commit();
    }
    // One slice per trip: left to itself, ptxas unrolls the BM 32 loop and its register count
    // (hence residency) then moves with the __launch_bounds__ cap in both directions.
#pragma unroll 1
    for (int kt = 0; kt < slices; ++kt) {
        const int stage = kt % STAGES;
        gg::cp_async_wait<STAGES - 1>();
        __syncthreads();  // every thread's copies of slice kt are visible to every warp
        if constexpr (FRAG_DB) {
            load_frags(0, stage, 0);
#pragma unroll
            for (int ks = 0; ks < K_STEPS; ++ks) {
                if (ks + 1 < K_STEPS) load_frags((ks + 1) % 2, stage, ks + 1);
                mma_step(ks % 2);
            }
        } else {
#pragma unroll
            for (int ks = 0; ks < K_STEPS; ++ks) {
                load_frags(0, stage, ks);
                mma_step(0);
            }
        }
        __syncthreads();  // no warp still reads this stage when it is refilled below
        if (kt + STAGES < slices) load_slice(stage, (kt + STAGES) * BLOCK_K);
        gg::cp_async_commit();
    }

    // lab:gap-begin epilogue
    gg::store_mma_sync_tile(acc, C, n, tile, warp_row, warp_col, lane);  // gg_mma_sync_store.cuh
    // lab:gap-end
}

template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int WARP_M, int WARP_N, bool FRAG_DB,
          int MIN_BLOCKS>
cudaError_t k1_info(GgKernelInfo *info) {
    info->kernel =
        (const void *)k1_kernel<BLOCK_M, BLOCK_N, BLOCK_K, WARP_M, WARP_N, FRAG_DB, MIN_BLOCKS>;
    info->threads = THREADS;
    info->dynamic_smem = 0;  // all static, under the 48 KiB static limit
    info->cluster = 1;
    info->block_m = BLOCK_M;
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = STAGES;
    info->host_tiles = 1;
    return cudaSuccess;
}

template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int WARP_M, int WARP_N, bool FRAG_DB,
          int MIN_BLOCKS>
cudaError_t k1_launch(const GgLaunch *p) {
    if (p->num_tiles == 0) return cudaSuccess;
    k1_kernel<BLOCK_M, BLOCK_N, BLOCK_K, WARP_M, WARP_N, FRAG_DB, MIN_BLOCKS>
        <<<p->num_tiles, THREADS, 0, p->stream>>>(p->a, p->b, p->c, p->tiles, p->k, p->n);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

constexpr int K1_BLOCK_N = 128, K1_BLOCK_K = 32;

extern "C" int k1_mmasync_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k % K1_BLOCK_K != 0) {
        snprintf(why, len, "k1_mmasync needs k %% %d == 0 (k = %d)", K1_BLOCK_K, s->k);
        return 0;
    }
    if (s->n % 8 != 0) {
        snprintf(why, len, "k1_mmasync needs n %% 8 == 0 for 16-byte copies (n = %d)", s->n);
        return 0;
    }
    return 1;
}

// One registered configuration: NAME_info / NAME_launch for one template instance.
#define K1_CONFIG(NAME, BLOCK_M, WARP_M, WARP_N, FRAG_DB, MIN_BLOCKS)                        \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                \
        return k1_info<BLOCK_M, K1_BLOCK_N, K1_BLOCK_K, WARP_M, WARP_N, FRAG_DB, MIN_BLOCKS>( \
            info);                                                                          \
    }                                                                                       \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                               \
        return k1_launch<BLOCK_M, K1_BLOCK_N, K1_BLOCK_K, WARP_M, WARP_N, FRAG_DB,            \
                         MIN_BLOCKS>(p);                                                    \
    }

// lab:configs
// MIN_BLOCKS is each configuration's residency target; the registers ptxas gives under it are
// in README.md's generated resources table. FRAG_DB under BM 64's four-block cap compiles to the
// very same main loop as BM 64 (no room for a second fragment set), so it targets three blocks.
K1_CONFIG(k1_mmasync_bm128, 128, 64, 32, false, 2)
K1_CONFIG(k1_mmasync_bm64, 64, 32, 32, false, 4)
// BM 32 keeps the 2 x 4 warp grid (warp tile 16 x 32) rather than 1 x 8 of 32 x 16: both read
// the same shared-memory bytes and issue 3 ldmatrix.x4 per 4 mma, but this way WARP_N = 32 in
// every configuration, so B fragments and the epilogue's column walk are the same code.
K1_CONFIG(k1_mmasync_bm32, 32, 16, 32, false, 5)
K1_CONFIG(k1_mmasync_bm64_fragdb, 64, 32, 32, true, 3)
