// k0_fma — stage 0: the grouped GEMM on FP32 CUDA cores.
//
// What this stage establishes (there is no previous stage): the flat expert-major tile
// list, one block per tile descriptor, partial tiles at expert boundaries guarded on store.
//
// Block tile   BLOCK_M x BLOCK_N = 64 x 64, K-slices of BLOCK_K = 16.
// Threads      256 as a 16 x 16 grid; each owns a 4 x 4 register micro-tile of C and, per k,
//              reads 4 floats of A and 4 of B from shared memory for 16 FFMA (a rank-1
//              update). ptxas turns those reads into 16-byte LDS.128 over the unrolled k
//              steps (README.md: the main loop's instruction mix, from the SASS).
// Shared mem   fp32 tiles As[64][16+1] + Bs[16][64] = 8.3 KiB static, single-buffered.
//              Reads of As are broadcasts: a warp's lanes share two micro-tile row groups.
//              A thread's four rows of As are one contiguous 16-byte-aligned run (pad
//              included), which is what lets ptxas read them with LDS.128. The +1 pad
//              spreads the staging stores, which write 8 rows of 16 words at once.
// Inputs       bf16 from global, widened to fp32 on the way into shared memory.
// Preconditions  k % 16 == 0 (no K tail). Any n: columns >= n are zeros on load and skipped
//              on store, and every access to A, B and C is a 2-byte scalar, so n needs no
//              alignment. Rows past an expert's end are likewise zeros and never stored.
// Run it       build/bin/ggemm run --kernel k0_fma
#include <cuda_bf16.h>
#include <stdio.h>

#include "gg_check.h"
#include "gg_kernel.h"
#include "k0_fma.h"

namespace {

constexpr int BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 16;
constexpr int THREAD_M = 4, THREAD_N = 4;
constexpr int THREADS = (BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N);
static_assert(THREADS == 256, "k0 assumes 256 threads: a 16 x 16 grid of 4 x 4 micro-tiles");
static_assert(BLOCK_M * BLOCK_K == 4 * THREADS, "each thread stages 4 elements of A per slice");
static_assert(BLOCK_K * BLOCK_N == 4 * THREADS, "each thread stages 4 elements of B per slice");

__global__ void __launch_bounds__(THREADS)
k0_fma_kernel(const __nv_bfloat16 *__restrict__ A, const __nv_bfloat16 *__restrict__ B,
              __nv_bfloat16 *__restrict__ C, const GgTile *__restrict__ tiles, int k, int n) {
    __shared__ float As[BLOCK_M][BLOCK_K + 1];
    __shared__ float Bs[BLOCK_K][BLOCK_N];

    const GgTile tile = tiles[blockIdx.x];
    const int tid = threadIdx.x;
    const int tx = tid % (BLOCK_N / THREAD_N);  // column group of the micro-tile
    const int ty = tid / (BLOCK_N / THREAD_N);  // row group of the micro-tile
    const __nv_bfloat16 *A_tile = A + (size_t)tile.row0 * k;
    const __nv_bfloat16 *B_expert = B + (size_t)tile.expert * k * n;

    // Staging roles: A slice is 64 rows x 16 k -> thread loads 4 consecutive k of one row;
    // B slice is 16 k x 64 cols -> thread loads 4 consecutive columns of one k row.
    const int a_row = tid / (BLOCK_K / 4), a_col = (tid % (BLOCK_K / 4)) * 4;
    const int b_row = tid / (BLOCK_N / 4), b_col = (tid % (BLOCK_N / 4)) * 4;

    float acc[THREAD_M][THREAD_N] = {};

    for (int k0 = 0; k0 < k; k0 += BLOCK_K) {
        // lab:gap-begin tile-loop
        // Rows beyond the tile's valid rows belong to the next expert (or past the end of A):
        // load zeros so no out-of-bounds read happens; they are never stored anyway.
        for (int j = 0; j < 4; ++j) {
            float v = 0.f;
            if (a_row < tile.rows) v = __bfloat162float(A_tile[(size_t)a_row * k + k0 + a_col + j]);
            As[a_row][a_col + j] = v;
        }
        for (int j = 0; j < 4; ++j) {
            const int col = tile.col0 + b_col + j;
            Bs[b_row][b_col + j] =
                col < n ? __bfloat162float(B_expert[(size_t)(k0 + b_row) * n + col]) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K; ++kk) {
            float a[THREAD_M], b[THREAD_N];
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i) a[i] = As[ty * THREAD_M + i][kk];
#pragma unroll
            for (int j = 0; j < THREAD_N; ++j) b[j] = Bs[kk][tx * THREAD_N + j];
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
                for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();  // the next slice overwrites As/Bs
        // lab:gap-end
    }

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        const int r = ty * THREAD_M + i;
        if (r >= tile.rows) continue;  // the next expert's rows: not ours to write
        __nv_bfloat16 *c_row = C + (size_t)(tile.row0 + r) * n;
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) {
            const int col = tile.col0 + tx * THREAD_N + j;
            if (col < n) c_row[col] = __float2bfloat16_rn(acc[i][j]);
        }
    }
}

}  // namespace

extern "C" int k0_fma_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k % BLOCK_K != 0) {
        snprintf(why, len, "k0_fma needs k %% %d == 0 (k = %d)", BLOCK_K, s->k);
        return 0;
    }
    return 1;
}

extern "C" cudaError_t k0_fma_info(GgKernelInfo *info) {
    info->kernel = (const void *)k0_fma_kernel;
    info->threads = THREADS;
    info->dynamic_smem = 0;
    info->cluster = 1;
    info->block_m = BLOCK_M;
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = 1;  // one shared-memory buffer, refilled behind a block barrier
    info->host_tiles = 1;
    return cudaSuccess;
}

extern "C" cudaError_t k0_fma_launch(const GgLaunch *p) {
    if (p->num_tiles == 0) return cudaSuccess;
    k0_fma_kernel<<<p->num_tiles, THREADS, 0, p->stream>>>(
        reinterpret_cast<const __nv_bfloat16 *>(p->a), reinterpret_cast<const __nv_bfloat16 *>(p->b),
        reinterpret_cast<__nv_bfloat16 *>(p->c), p->tiles, p->k, p->n);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
